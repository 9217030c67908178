package preprovisioning_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// Every version of the host the API server ever held is looked at: none may be without our pause
// and without the name, or BMO could start inspecting a host with no network for its ramdisk.
func TestPauseIsLiftedOnlyOnceTheNameIsSet(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ns := newNamespace(t)

	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, &bmov1.BareMetalHostList{}, client.InNamespace(ns))
	g.Expect(err).NotTo(HaveOccurred())
	defer w.Stop()

	startManager(t, ns)
	create(t, newPool(ns, "pool", "", 30, 10, 20), newTemplate(ns, "tmpl", "pool"),
		newHost(ns, "host-0", prefix+"tmpl", infrav1.PreprovisioningPausedAnnotationValue, 1))

	var versions int
	for ev := range w.ResultChan() {
		g.Expect(ev.Type).NotTo(Equal(watch.Error), "watch error: %v", ev.Object)
		h := ev.Object.(*bmov1.BareMetalHost)
		versions++
		_, paused := h.Annotations[bmov1.PausedAnnotation]
		if !paused {
			g.Expect(h.Spec.PreprovisioningNetworkDataName).To(Equal("host-0-preprov-networkdata"),
				"version %s of the host has no pause and no pre-provisioning network data", h.ResourceVersion)
			break
		}
	}
	g.Expect(ctx.Err()).NotTo(HaveOccurred(), "the pause was never lifted")
	g.Expect(versions).To(BeNumerically(">=", 2))
}

// A host paused by another tool (here CAPM3's pause of a paused cluster) gets its data, and the
// other tool's pause stays.
func TestAnotherToolsPauseIsNeverRemoved(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool", "", 31, 10, 20), newTemplate(ns, "tmpl", "pool"),
		newHost(ns, "host-0", prefix+"tmpl", "metal3.io/capm3", 1))

	g.Eventually(func(g Gomega) {
		g.Expect(getHost(g, ns, "host-0").Spec.PreprovisioningNetworkDataName).To(Equal("host-0-preprov-networkdata"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(getHost(g, ns, "host-0").Annotations).To(HaveKeyWithValue(bmov1.PausedAnnotation, "metal3.io/capm3"))
	}).WithTimeout(2 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
}

// Without a pause (BMO implementing the proposal waits for the Secret by itself) the host just
// gets its name, and no pause appears.
func TestWithoutPauseOnlyTheNameIsSet(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool", "", 32, 10, 20), newTemplate(ns, "tmpl", "pool"), newHost(ns, "host-0", prefix+"tmpl", "", 1))
	h := waitRendered(t, ns, "host-0")
	g.Expect(h.Annotations).NotTo(HaveKey(bmov1.PausedAnnotation))
}

// A host held for a template that does not exist yet stays held; it is released once the
// template is created.
func TestHeldHostWaitsForItsTemplate(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns)
	create(t, newPool(ns, "pool", "", 33, 10, 20), newHost(ns, "host-0", prefix+"later", infrav1.PreprovisioningPausedAnnotationValue, 1))
	g.Expect(hostEvent(t, ns, "host-0", "TemplateNotFound")).To(Equal(
		"Metal3PreprovisioningDataTemplate later not found in namespace " + ns + "; create it, or fix the name in the baremetalhost.metal3.io/preprovisioningnetworkdata-reference annotation"))
	g.Expect(getHost(g, ns, "host-0").Annotations).To(HaveKeyWithValue(bmov1.PausedAnnotation, infrav1.PreprovisioningPausedAnnotationValue))

	create(t, newTemplate(ns, "later", "pool"))
	waitRendered(t, ns, "host-0")
}
