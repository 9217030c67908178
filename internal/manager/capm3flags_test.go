package manager_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/manager"
)

// A CAPM3 deployment's arguments carry over: the flag names upstream's manager takes are
// accepted and mean the same.
func TestCAPM3FlagsCarryOver(t *testing.T) {
	tests := []struct {
		name            string
		env             string
		args            []string
		wantIPReuse     bool
		wantFastTrack   bool
		wantFilter      string
		wantConcurrency map[string]int
	}{
		{name: "defaults", wantConcurrency: map[string]int{}},
		{name: "CAPM3's name for --ip-reuse", args: []string{"--enable-bmh-name-based-preallocation"}, wantIPReuse: true, wantConcurrency: map[string]int{}},
		{name: "--ip-reuse still works", args: []string{"--ip-reuse"}, wantIPReuse: true, wantConcurrency: map[string]int{}},
		{name: "watch filter", args: []string{"--watch-filter=team-a"}, wantFilter: "team-a", wantConcurrency: map[string]int{}},
		{name: "per-controller concurrency beside --concurrency",
			args:            []string{"--concurrency=7", "--metal3machine-concurrency=3", "--metal3labelsync-concurrency=1", "--metal3data-concurrency=0"},
			wantConcurrency: map[string]int{"metal3machine": 3, "metal3labelsync": 1}},
		{name: "fast track from CAPM3_FAST_TRACK", env: "true", wantFastTrack: true, wantConcurrency: map[string]int{}},
		{name: "CAPM3_FAST_TRACK=false", env: "false", wantConcurrency: map[string]int{}},
		{name: "--fast-track=false wins over the environment", env: "true", args: []string{"--fast-track=false"}, wantConcurrency: map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			t.Setenv("CAPM3_FAST_TRACK", tt.env)
			o := &manager.Options{}
			fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
			o.AddFlags(fs)
			g.Expect(fs.Parse(tt.args)).To(Succeed())
			g.Expect(o.IPReuse).To(Equal(tt.wantIPReuse))
			g.Expect(o.FastTrack).To(Equal(tt.wantFastTrack))
			g.Expect(o.WatchFilter).To(Equal(tt.wantFilter))
			g.Expect(o.ControllerConcurrency()).To(Equal(tt.wantConcurrency))
		})
	}
}

// With --watch-filter the manager reconciles only the objects labelled
// cluster.x-k8s.io/watch-filter=<value>; another manager's (or nobody's) are left untouched.
func TestWatchFilterLeavesOtherObjectsAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())

	o := &manager.Options{}
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	g.Expect(fs.Parse([]string{"--kubeconfig", kubeconfig, "--leader-elect=false", "--controllers=infrastructure",
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--webhook-cert-dir", t.TempDir(),
		"--watch-filter=team-a"})).To(Succeed())
	groups, err := o.Groups()
	g.Expect(err).NotTo(HaveOccurred())
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- manager.Run(runCtx, o, groups) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the manager did not stop within 30s")
		}
	})

	ns := env.NewNamespace(t)
	pair := func(name string, labels map[string]string) *infrav1.Metal3Cluster {
		cluster := &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: clusterv1.ClusterSpec{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: name},
			},
		}
		g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
		m3c := &infrav1.Metal3Cluster{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: ns, Name: name,
				Labels:          map[string]string{clusterv1.ClusterNameLabel: name},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: cluster.UID}},
			},
			Spec: infrav1.Metal3ClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "192.168.111.249", Port: 6443}},
		}
		for k, v := range labels {
			m3c.Labels[k] = v
		}
		g.Expect(env.Client.Create(ctx, m3c)).To(Succeed())
		return m3c
	}
	ours := pair("ours", map[string]string{clusterv1.WatchLabel: "team-a"})
	theirs := pair("theirs", map[string]string{clusterv1.WatchLabel: "team-b"})
	nobodys := pair("nobodys", nil)

	get := func(g Gomega, m3c *infrav1.Metal3Cluster) *infrav1.Metal3Cluster {
		out := &infrav1.Metal3Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m3c), out)).To(Succeed())
		return out
	}
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, ours).Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	}, timeout, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		for _, m3c := range []*infrav1.Metal3Cluster{theirs, nobodys} {
			got := get(g, m3c)
			g.Expect(got.Finalizers).To(BeEmpty(), "%s was reconciled", m3c.Name)
			g.Expect(got.Status.Conditions).To(BeEmpty(), "%s was reconciled", m3c.Name)
		}
	}, 3*time.Second, poll).Should(Succeed())
}
