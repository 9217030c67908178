package datatest

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

const (
	metaDataImmutable    = "metaData is immutable: hosts already rendered keep their data; create a new Metal3DataTemplate and point the Metal3MachineTemplate at it"
	networkDataImmutable = "networkData is immutable: hosts already rendered keep their data; create a new Metal3DataTemplate and point the Metal3MachineTemplate at it"
	indexImmutable       = "index is immutable: it is the host's position in the template and names its Secrets; delete the Metal3DataClaim to get a new index"
	claimImmutable       = "claim is immutable: a Metal3Data belongs to one Metal3DataClaim for its whole life; delete the claim and let a new Metal3Data be created"
	dataTemplateImmut    = "template is immutable: a Metal3Data is rendered once from one template; point the Metal3MachineTemplate at the new template and roll the machines"
	claimTemplateImmut   = "template is immutable: the claim already holds an index in that template; delete the claim (the machine controller creates a new one) to use another template"
)

// updateCase creates a valid object, changes it, and expects the update refused.
type updateCase[T client.Object] struct {
	name    string
	create  func(ns string) T
	change  func(T)
	field   string
	message string
}

func runUpdateRefusals[T client.Object](t *testing.T, cases []updateCase[T]) {
	t.Helper()
	ns := newNamespace(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			ctx := context.Background()
			obj := tc.create(ns)
			if obj.GetName() != "" { // cases share a namespace
				obj.SetGenerateName(obj.GetName() + "-")
				obj.SetName("")
			}
			g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
			tc.change(obj)
			expectRefused(g, env.Client.Update(ctx, obj), tc.field, tc.message)
		})
	}
}

func TestDataTemplateSpecIsImmutable(t *testing.T) {
	runUpdateRefusals(t, []updateCase[*infrav1.Metal3DataTemplate]{
		{
			name: "changing a metaData item", create: validTemplate,
			change: func(m *infrav1.Metal3DataTemplate) { m.Spec.MetaData.Strings[0].Value = "control-plane" },
			field:  "spec.metaData", message: metaDataImmutable,
		},
		{
			name: "removing metaData", create: validTemplate,
			change: func(m *infrav1.Metal3DataTemplate) { m.Spec.MetaData = nil },
			field:  "spec.metaData", message: metaDataImmutable,
		},
		{
			name: "adding metaData",
			create: func(ns string) *infrav1.Metal3DataTemplate {
				m := validTemplate(ns)
				m.Spec.MetaData = nil
				return m
			},
			change: func(m *infrav1.Metal3DataTemplate) {
				m.Spec.MetaData = &infrav1.MetaData{Strings: []infrav1.MetaDataString{{Key: "role", Value: "worker"}}}
			},
			field: "spec.metaData", message: metaDataImmutable,
		},
		{
			name: "changing a link's MTU", create: validTemplate,
			change: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Links.Ethernets[0].MTU = 9000 },
			field:  "spec.networkData", message: networkDataImmutable,
		},
		{
			name: "removing networkData", create: validTemplate,
			change: func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData = nil },
			field:  "spec.networkData", message: networkDataImmutable,
		},
	})
}

func TestDataTemplateAllowsOtherUpdates(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	tpl := validTemplate(newNamespace(t))
	g.Expect(env.Client.Create(ctx, tpl)).To(Succeed())

	// Labels, clusterName and status are not what hosts were rendered from.
	tpl.Labels = map[string]string{"cluster.x-k8s.io/cluster-name": "cluster-b"}
	tpl.Spec.ClusterName = "cluster-b"
	g.Expect(env.Client.Update(ctx, tpl)).To(Succeed())
	tpl.Status.Indexes = []infrav1.IndexEntry{{Name: "machine-a", Index: 0}}
	g.Expect(env.Client.Status().Update(ctx, tpl)).To(Succeed())
}

func TestDataIdentityIsImmutable(t *testing.T) {
	runUpdateRefusals(t, []updateCase[*infrav1.Metal3Data]{
		{
			name: "changing the index", create: validData,
			change: func(d *infrav1.Metal3Data) { d.Spec.Index = ptr.To[int32](4) },
			field:  "spec.index", message: indexImmutable,
		},
		{
			name: "changing index 0, which the JSON omits",
			create: func(ns string) *infrav1.Metal3Data {
				d := validData(ns)
				d.Spec.Index = ptr.To[int32](0)
				return d
			},
			change: func(d *infrav1.Metal3Data) { d.Spec.Index = ptr.To[int32](1) },
			field:  "spec.index", message: indexImmutable,
		},
		{
			name: "setting the index back to 0", create: validData,
			change: func(d *infrav1.Metal3Data) { d.Spec.Index = ptr.To[int32](0) },
			field:  "spec.index", message: indexImmutable,
		},
		{
			name: "changing the claim", create: validData,
			change: func(d *infrav1.Metal3Data) { d.Spec.Claim.Name = "machine-b" },
			field:  "spec.claim", message: claimImmutable,
		},
		{
			name: "changing the template", create: validData,
			change: func(d *infrav1.Metal3Data) { d.Spec.Template.Name = "tpl-v2" },
			field:  "spec.template", message: dataTemplateImmut,
		},
	})
}

func TestDataAllowsSecretReferencesToBeSet(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	d := validData(newNamespace(t))
	g.Expect(env.Client.Create(ctx, d)).To(Succeed())

	// The data controller fills in the Secrets after rendering.
	d.Spec.NetworkData = &corev1.SecretReference{Name: "machine-a-networkdata-3", Namespace: d.Namespace}
	g.Expect(env.Client.Update(ctx, d)).To(Succeed())
}

func TestDataClaimTemplateIsImmutable(t *testing.T) {
	runUpdateRefusals(t, []updateCase[*infrav1.Metal3DataClaim]{
		{
			name: "changing the template", create: validClaim,
			change: func(c *infrav1.Metal3DataClaim) { c.Spec.Template.Name = "tpl-v2" },
			field:  "spec.template", message: claimTemplateImmut,
		},
	})
}
