package seeds_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/yaml"

	infrav1beta1 "github.com/metalwire/metalwire/api/infrastructure/v1beta1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/migrate"
)

// v1beta2Only names the seed documents that use a field CAPM3's v1beta1 has no place for (and
// that field's path): `migrate --to v1beta1` must say so, which the check asserts instead.
var v1beta2Only = map[string]string{
	// The seed is v1alpha4, which had metaData.ipAddresses; CAPM3's v1beta1 dropped it (and
	// metalwire's v1beta2 brought it back).
	"Metal3DataTemplate/nodepool-1": "spec.metaData.ipAddresses",
}

// checkAsV1beta1 takes a migrated infrastructure document through `metalwire migrate --to
// v1beta1` (migrate is idempotent, so this is the seed's output with --to v1beta1), creates the
// result through the v1beta1 endpoint under another name, and checks it reads back as v1beta2
// equal to the document applied as v1beta2 under its own name. Kinds CAPM3's v1beta1 never had
// (Metal3PreprovisioningDataTemplate) must stay v1beta2 with a warning; other groups are skipped.
func checkAsV1beta1(t *testing.T, doc migrate.Document, ns string) {
	t.Helper()
	if doc.APIVersion != infrav1.GroupVersion.String() {
		return
	}
	g := NewWithT(t)
	ctx := context.Background()
	res, err := migrate.ToVersion(doc.YAML, migrate.ToV1beta1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Documents).To(HaveLen(1))
	v1 := res.Documents[0]

	hubObj, err := env.Scheme.New(infrav1.GroupVersion.WithKind(doc.Kind))
	g.Expect(err).NotTo(HaveOccurred())
	if _, ok := hubObj.(conversion.Hub); !ok {
		g.Expect(v1.APIVersion).To(Equal(infrav1.GroupVersion.String()), "%s has no v1beta1", doc.Kind)
		g.Expect(v1.Warnings).To(ContainElement(HaveField("Path", "apiVersion")), "migrate says %s stays v1beta2", doc.Kind)
		return
	}
	if field, ok := v1beta2Only[doc.Object]; ok {
		g.Expect(v1.MustChange).To(ContainElement(HaveField("Path", field)), "migrate --to v1beta1 says %s cannot be written as v1beta1", field)
		g.Expect(string(v1.YAML)).NotTo(ContainSubstring(field[len("spec.metaData."):]+":"), "the v1beta1 manifest leaves %s out", field)
		t.Logf("%s uses %s, which CAPM3's v1beta1 has no field for: migrate --to v1beta1 says so", doc.Object, field)
		return
	}
	g.Expect(v1.APIVersion).To(Equal(infrav1beta1.GroupVersion.String()))
	g.Expect(v1.MustChange).To(BeEmpty(), "migrate --to v1beta1:\n%s", v1.YAML)

	spokeObj, err := env.Scheme.New(infrav1beta1.GroupVersion.WithKind(doc.Kind))
	g.Expect(err).NotTo(HaveOccurred(), "%s is a conversion hub but v1beta1 does not serve it", doc.Kind)
	g.Expect(yaml.UnmarshalStrict(v1.YAML, spokeObj)).To(Succeed(), "migrate --to v1beta1 wrote:\n%s", v1.YAML)
	meta := spokeObj.(client.Object)
	name := meta.GetName()
	meta.SetName(name + "-v1beta1")
	meta.SetNamespace(ns)
	g.Expect(env.Client.Create(ctx, meta)).To(Succeed(), "as v1beta1:\n%s", v1.YAML)

	viaV1beta1 := hubObj.DeepCopyObject().(client.Object)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-v1beta1"}, viaV1beta1)).To(Succeed())
	viaV1beta2 := hubObj.DeepCopyObject().(client.Object)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, viaV1beta2)).To(Succeed())
	g.Expect(cmp.Diff(specOf(viaV1beta2), specOf(viaV1beta1))).To(BeEmpty(),
		"%s written by migrate --to v1beta1 reads back as v1beta2 as it was applied; as v1beta1:\n%s", doc.Object, v1.YAML)
	t.Logf("%s after migrate --to v1beta1 applies as v1beta1 and reads back as v1beta2 unchanged", doc.Object)
}

func specOf(obj runtime.Object) any {
	return reflect.ValueOf(obj).Elem().FieldByName("Spec").Interface()
}
