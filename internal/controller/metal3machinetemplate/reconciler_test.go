package metal3machinetemplate_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/metal3machinetemplate"
	"github.com/metalwire/metalwire/internal/manager/managertest"
	"github.com/metalwire/metalwire/internal/testenv"
)

var env *testenv.Env

const (
	eventually = 20 * time.Second
	poll       = 100 * time.Millisecond
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	started, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env = started
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The image's manager (managertest), with this package's reconciler alone.
	mgr, err := managertest.Build(ctx, env, "", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := (&metal3machinetemplate.Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, 2); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return testenv.RunWithManagers(m, cancel, done)
}

var image = infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")}

// createMachine makes a Metal3Machine as Cluster API clones it from a template: with the
// cloned-from annotations.
func createMachine(g Gomega, ns, name, template, groupKind string, mode infrav1.AutomatedCleaningMode) *infrav1.Metal3Machine {
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{
			clusterv1.TemplateClonedFromNameAnnotation:      template,
			clusterv1.TemplateClonedFromGroupKindAnnotation: groupKind,
		}},
		Spec: infrav1.Metal3MachineSpec{Image: image, AutomatedCleaningMode: ptr.To(mode)},
	}
	g.Expect(env.Client.Create(context.Background(), m3m)).To(Succeed())
	return m3m
}

func modeOf(g Gomega, m3m *infrav1.Metal3Machine) infrav1.AutomatedCleaningMode {
	got := &infrav1.Metal3Machine{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(m3m), got)).To(Succeed())
	return ptr.Deref(got.Spec.AutomatedCleaningMode, "")
}

// Changing a Metal3MachineTemplate's automatedCleaningMode changes it on the machines cloned from
// it (and only those), as upstream CAPM3 does; a machine edited by hand is set back.
func TestTemplateCleaningModeReachesItsMachines(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	tmpl := &infrav1.Metal3MachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers"},
		Spec: infrav1.Metal3MachineTemplateSpec{Template: infrav1.Metal3MachineTemplateResource{Spec: infrav1.Metal3MachineSpec{
			Image: image, AutomatedCleaningMode: ptr.To(infrav1.CleaningModeMetadata),
		}}},
	}
	g.Expect(env.Client.Create(ctx, tmpl)).To(Succeed())
	gk := "Metal3MachineTemplate.infrastructure.cluster.x-k8s.io"
	w1 := createMachine(g, ns, "workers-1", "workers", gk, infrav1.CleaningModeMetadata)
	w2 := createMachine(g, ns, "workers-2", "workers", gk, infrav1.CleaningModeMetadata)
	other := createMachine(g, ns, "cp-1", "control-plane", gk, infrav1.CleaningModeMetadata)
	foreign := createMachine(g, ns, "x-1", "workers", "OtherTemplate.example.com", infrav1.CleaningModeMetadata)

	g.Expect(env.Client.Patch(ctx, tmpl, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"automatedCleaningMode":"disabled"}}}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(modeOf(g, w1)).To(Equal(infrav1.CleaningModeDisabled))
		g.Expect(modeOf(g, w2)).To(Equal(infrav1.CleaningModeDisabled))
	}, eventually, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(modeOf(g, other)).To(Equal(infrav1.CleaningModeMetadata), "cloned from another template")
		g.Expect(modeOf(g, foreign)).To(Equal(infrav1.CleaningModeMetadata), "cloned from another kind's template")
	}, "1s", poll).Should(Succeed())

	// A machine edited by hand goes back to its template's mode.
	g.Expect(env.Client.Patch(ctx, w1, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"automatedCleaningMode":"metadata"}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(modeOf(g, w1)).To(Equal(infrav1.CleaningModeDisabled))
	}, eventually, poll).Should(Succeed())

	// A machine created later is in step too.
	w3 := createMachine(g, ns, "workers-3", "workers", gk, infrav1.CleaningModeMetadata)
	g.Eventually(func(g Gomega) {
		g.Expect(modeOf(g, w3)).To(Equal(infrav1.CleaningModeDisabled))
	}, eventually, poll).Should(Succeed())
}
