package seeds_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/yaml"

	infrav1beta1 "github.com/metalwire/metalwire/api/infrastructure/v1beta1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/migrate"
)

// v1beta2Only names the seed documents that use a field CAPM3's v1beta1 has no place for (and
// that field): written as v1beta1 they lose it, which the check asserts instead.
var v1beta2Only = map[string]string{
	// The seed is v1alpha4, which had metaData.ipAddresses; CAPM3's v1beta1 dropped it (and
	// metalwire's v1beta2 brought it back).
	"Metal3DataTemplate/nodepool-1": "IPAddresses",
}

// checkAsV1beta1 writes a migrated infrastructure document as CAPM3's v1beta1 (the form most
// existing manifests are in), creates it through the v1beta1 endpoint under another name, and
// checks it reads back as v1beta2 equal to the document applied as v1beta2 under its own name.
// Kinds served in v1beta2 only (Metal3PreprovisioningDataTemplate) and other groups are skipped.
func checkAsV1beta1(t *testing.T, doc migrate.Document, ns string) {
	t.Helper()
	if doc.APIVersion != infrav1.GroupVersion.String() {
		return
	}
	g := NewWithT(t)
	ctx := context.Background()
	hubObj, err := env.Scheme.New(infrav1.GroupVersion.WithKind(doc.Kind))
	g.Expect(err).NotTo(HaveOccurred())
	hub, ok := hubObj.(conversion.Hub)
	if !ok {
		return
	}
	spokeObj, err := env.Scheme.New(infrav1beta1.GroupVersion.WithKind(doc.Kind))
	g.Expect(err).NotTo(HaveOccurred(), "%s is a conversion hub but v1beta1 does not serve it", doc.Kind)
	spoke := spokeObj.(conversion.Convertible)

	g.Expect(yaml.Unmarshal(doc.YAML, hub)).To(Succeed())
	g.Expect(spoke.ConvertFrom(hub)).To(Succeed())
	meta := spoke.(client.Object)
	// A manifest written in v1beta1 has no conversion data: everything must be in its fields.
	annotations := meta.GetAnnotations()
	delete(annotations, utilconversion.DataAnnotation)
	meta.SetAnnotations(annotations)
	name := meta.GetName()
	meta.SetName(name + "-v1beta1")
	meta.SetNamespace(ns)
	asV1beta1, err := yaml.Marshal(spoke)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, meta)).To(Succeed(), "as v1beta1:\n%s", asV1beta1)

	viaV1beta1 := hubObj.DeepCopyObject().(client.Object)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-v1beta1"}, viaV1beta1)).To(Succeed())
	viaV1beta2 := hubObj.DeepCopyObject().(client.Object)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, viaV1beta2)).To(Succeed())
	diff := cmp.Diff(specOf(viaV1beta2), specOf(viaV1beta1))
	if field, ok := v1beta2Only[doc.Object]; ok {
		g.Expect(diff).To(ContainSubstring(field), "%s has %s, which v1beta1 cannot hold", doc.Object, field)
		t.Logf("%s uses %s, which CAPM3's v1beta1 has no field for: written as v1beta1 it is lost, as expected", doc.Object, field)
		return
	}
	g.Expect(diff).To(BeEmpty(),
		"%s written as v1beta1 reads back as v1beta2 as it was applied; as v1beta1:\n%s", doc.Object, asV1beta1)
	t.Logf("%s applies as v1beta1 and reads back as v1beta2 unchanged", doc.Object)
}

func specOf(obj runtime.Object) any {
	return reflect.ValueOf(obj).Elem().FieldByName("Spec").Interface()
}
