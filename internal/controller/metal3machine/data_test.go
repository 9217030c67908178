package metal3machine

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/internal/controller/metal3dataclaim"
)

// stubClaimer stands in for the Metal3DataTemplate chain at the seam, so that the machine's use
// of its answers can be checked; it is test-only.
type stubClaimer struct {
	rendered *metal3dataclaim.Rendered
	err      error
	claimed  int
}

func (s *stubClaimer) Claim(context.Context, *infrav1.Metal3Machine) (*metal3dataclaim.Rendered, error) {
	s.claimed++
	return s.rendered, s.err
}

func (s *stubClaimer) Release(context.Context, *infrav1.Metal3Machine) (bool, error) {
	return true, nil
}

func secretRef(name string) *corev1.SecretReference {
	return &corev1.SecretReference{Namespace: "ns", Name: name}
}

func TestResolveData(t *testing.T) {
	rendered := &metal3dataclaim.Rendered{
		Metal3Data:  &corev1.ObjectReference{Name: "tmpl-0"},
		MetaData:    secretRef("m1-metadata-0"),
		NetworkData: secretRef("m1-networkdata-0"),
	}
	tmpl := &corev1.ObjectReference{Name: "tmpl"}
	tests := []struct {
		name        string
		spec        infrav1.Metal3MachineSpec
		claimer     DataTemplateClaimer // nil: none wired in
		wantOK      bool
		wantErr     bool
		wantMeta    *corev1.SecretReference
		wantNetwork *corev1.SecretReference
		wantReason  string // of Metal3DataReady; "" means not set
	}{
		{name: "nothing given", wantOK: true},
		{name: "user Secrets, namespace defaulted",
			spec:   infrav1.Metal3MachineSpec{MetaData: &corev1.SecretReference{Name: "meta"}, NetworkData: secretRef("net")},
			wantOK: true, wantMeta: secretRef("meta"), wantNetwork: secretRef("net"), wantReason: infrav1.SecretsSetExternallyReason},
		{name: "template and no claimer: wait, nothing made up",
			spec:   infrav1.Metal3MachineSpec{DataTemplate: tmpl},
			wantOK: false, wantReason: infrav1.WaitingForMetal3DataReason},
		{name: "template, no claimer, but both Secrets given by the user: they win, no wait",
			spec:   infrav1.Metal3MachineSpec{DataTemplate: tmpl, MetaData: secretRef("meta"), NetworkData: secretRef("net")},
			wantOK: true, wantMeta: secretRef("meta"), wantNetwork: secretRef("net"), wantReason: infrav1.SecretsSetExternallyReason},
		{name: "template not rendered yet",
			spec: infrav1.Metal3MachineSpec{DataTemplate: tmpl}, claimer: &stubClaimer{},
			wantOK: false, wantReason: infrav1.WaitingForMetal3DataReason},
		{name: "template rendered",
			spec: infrav1.Metal3MachineSpec{DataTemplate: tmpl}, claimer: &stubClaimer{rendered: rendered},
			wantOK: true, wantMeta: rendered.MetaData, wantNetwork: rendered.NetworkData, wantReason: infrav1.Metal3DataSecretsReadyReason},
		{name: "user metaData wins over the rendered one",
			spec: infrav1.Metal3MachineSpec{DataTemplate: tmpl, MetaData: secretRef("mine")}, claimer: &stubClaimer{rendered: rendered},
			wantOK: true, wantMeta: secretRef("mine"), wantNetwork: rendered.NetworkData, wantReason: infrav1.Metal3DataSecretsReadyReason},
		{name: "claim fails",
			spec: infrav1.Metal3MachineSpec{DataTemplate: tmpl}, claimer: &stubClaimer{err: errors.New("template tmpl not found")},
			wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r := &Reconciler{Data: tt.claimer}
			m3m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "ns"}, Spec: tt.spec}
			meta, network, ok, err := r.resolveData(context.Background(), m3m)
			if tt.wantErr {
				g.Expect(err).To(HaveOccurred())
				g.Expect(condition(m3m, infrav1.AssociateMetal3MachineMetaDataCondition).Message).To(ContainSubstring("template tmpl not found"))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ok).To(Equal(tt.wantOK))
			g.Expect(meta).To(Equal(tt.wantMeta))
			g.Expect(network).To(Equal(tt.wantNetwork))
			g.Expect(condition(m3m, infrav1.Metal3MachineDataReadyCondition).Reason).To(Equal(tt.wantReason))
			if tt.wantReason == infrav1.Metal3DataSecretsReadyReason {
				g.Expect(m3m.Status.RenderedData).To(Equal(rendered.Metal3Data))
			}
		})
	}
}

func TestUserDataRef(t *testing.T) {
	tests := []struct {
		name      string
		spec      *corev1.SecretReference
		bootstrap *string
		want      *corev1.SecretReference
	}{
		{"nothing yet", nil, nil, nil},
		{"bootstrap data", nil, ptr.To("m1-bootstrap"), secretRef("m1-bootstrap")},
		{"spec.userData wins", &corev1.SecretReference{Name: "mine"}, ptr.To("m1-bootstrap"), secretRef("mine")},
		{"spec.userData in another namespace", &corev1.SecretReference{Name: "mine", Namespace: "other"}, nil, &corev1.SecretReference{Name: "mine", Namespace: "other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m3m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Spec: infrav1.Metal3MachineSpec{UserData: tt.spec}}
			machine := &clusterv1.Machine{Spec: clusterv1.MachineSpec{Bootstrap: clusterv1.Bootstrap{DataSecretName: tt.bootstrap}}}
			NewWithT(t).Expect(userDataRef(m3m, machine)).To(Equal(tt.want))
		})
	}
}
