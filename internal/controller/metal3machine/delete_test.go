package metal3machine

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// releasingClaimer is a test stand-in for the data chain whose claim takes a few calls to go.
type releasingClaimer struct {
	stubClaimer
	releases, goneAfter int
}

func (c *releasingClaimer) Release(context.Context, *infrav1.Metal3Machine) (bool, error) {
	c.releases++
	return c.releases >= c.goneAfter, nil
}

// A machine with a dataTemplate keeps its finalizer until the data chain says its claim is gone.
func TestDeleteWaitsForTheDataClaim(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(env.Scheme).
		WithIndex(&bmov1.BareMetalHost{}, hostConsumerIndex, func(o client.Object) []string {
			return []string{consumerKey(o.(*bmov1.BareMetalHost))}
		}).Build()
	claimer := &releasingClaimer{goneAfter: 2}
	r := &Reconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10), Data: claimer}
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", Finalizers: []string{infrav1.MachineFinalizer}},
		Spec:       infrav1.Metal3MachineSpec{DataTemplate: &corev1.ObjectReference{Name: "tmpl"}},
	}

	_, err := r.reconcileDelete(ctx, m3m)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m3m.Finalizers).To(ContainElement(infrav1.MachineFinalizer))
	g.Expect(condition(m3m, infrav1.Metal3MachineReadyCondition).Message).To(Equal("waiting for the Metal3DataClaim to be deleted"))

	_, err = r.reconcileDelete(ctx, m3m)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m3m.Finalizers).NotTo(ContainElement(infrav1.MachineFinalizer))
	g.Expect(claimer.releases).To(Equal(2))
}
