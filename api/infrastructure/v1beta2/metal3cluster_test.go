package v1beta2_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

func TestCloudProviderEnabledResolvesBothFields(t *testing.T) {
	tests := []struct {
		name                 string
		cloudProviderEnabled *bool
		noCloudProvider      *bool
		want                 bool
	}{
		{"neither set: upstream default, false", nil, nil, false},
		{"cloudProviderEnabled false", ptr.To(false), nil, false},
		{"cloudProviderEnabled true", ptr.To(true), nil, true},
		{"seed-era noCloudProvider true", nil, ptr.To(true), false},
		{"seed-era noCloudProvider false", nil, ptr.To(false), true},
		{"both, agreeing", ptr.To(false), ptr.To(true), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &infrav1.Metal3Cluster{Spec: infrav1.Metal3ClusterSpec{
				CloudProviderEnabled: tt.cloudProviderEnabled,
				NoCloudProvider:      tt.noCloudProvider,
			}}
			NewWithT(t).Expect(c.CloudProviderEnabled()).To(Equal(tt.want))
		})
	}
}

func TestAPIEndpointIsValid(t *testing.T) {
	tests := []struct {
		name  string
		given infrav1.APIEndpoint
		want  bool
	}{
		{"host and port", infrav1.APIEndpoint{Host: "10.0.0.1", Port: 6443}, true},
		{"no port", infrav1.APIEndpoint{Host: "10.0.0.1"}, false},
		{"no host", infrav1.APIEndpoint{Port: 6443}, false},
		{"empty", infrav1.APIEndpoint{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(tt.given.IsValid()).To(Equal(tt.want))
		})
	}
}

const m3cHeader = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Cluster
`

func TestMetal3ClusterAdmission(t *testing.T) {
	runAdmissionCases(t, "m3c-admission", []admissionCase{
		{name: "endpoint host only (port defaults)", given: m3cHeader + `
spec:
  controlPlaneEndpoint: {host: 192.168.111.249}
`},
		{name: "IPv6 endpoint and DNS name are hosts", given: m3cHeader + `
spec:
  controlPlaneEndpoint: {host: "fd00:1::10", port: 443}
`},
		{name: "DNS name endpoint", given: m3cHeader + `
spec:
  controlPlaneEndpoint: {host: API.cluster-1.example.com, port: 6443}
`},
		{name: "seed example with noCloudProvider", given: `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3Cluster
spec:
 controlPlaneEndpoint:
   host: 192.168.111.249
   port: 6443
 noCloudProvider: true
`},
		{name: "both cloud provider fields, agreeing", given: m3cHeader + `
spec:
  controlPlaneEndpoint: {host: 10.0.0.1}
  noCloudProvider: true
  cloudProviderEnabled: false
`},
		{name: "no endpoint", given: m3cHeader + `
spec:
  cloudProviderEnabled: true
`, want: []string{"spec.controlPlaneEndpoint: Required value", "must be set: host (and port, default 6443)"}},
		{name: "endpoint without host", given: m3cHeader + `
spec:
  controlPlaneEndpoint: {port: 6443}
`, want: []string{"spec.controlPlaneEndpoint.host: Required value", "must be set: the IP address or DNS name of the workload cluster's API server"}},
		{name: "endpoint given as URL", given: m3cHeader + `
spec:
  controlPlaneEndpoint: {host: "https://10.0.0.1:6443"}
`, want: []string{"spec.controlPlaneEndpoint.host", "must be an IP address or DNS name without scheme or port"}},
		{name: "port out of range", given: m3cHeader + `
spec:
  controlPlaneEndpoint: {host: 10.0.0.1, port: 70000}
`, want: []string{"spec.controlPlaneEndpoint.port", "less than or equal to 65535"}},
		{name: "noCloudProvider true contradicts cloudProviderEnabled true", given: m3cHeader + `
spec:
  controlPlaneEndpoint: {host: 10.0.0.1}
  noCloudProvider: true
  cloudProviderEnabled: true
`, want: []string{"spec.noCloudProvider", "contradicts cloudProviderEnabled; noCloudProvider is deprecated: delete it"}},
		{name: "noCloudProvider false contradicts cloudProviderEnabled false", given: m3cHeader + `
spec:
  controlPlaneEndpoint: {host: 10.0.0.1}
  noCloudProvider: false
  cloudProviderEnabled: false
`, want: []string{"spec.noCloudProvider", "contradicts cloudProviderEnabled"}},
		{name: "failure domain named twice", given: m3cHeader + `
spec:
  controlPlaneEndpoint: {host: 10.0.0.1}
  failureDomains: [{name: rack-1}, {name: rack-1, controlPlane: true}]
`, want: []string{"spec.failureDomains[1]", "Duplicate value"}},
		{name: "misspelt field", given: m3cHeader + `
spec:
  controlPlaneEndpoint: {host: 10.0.0.1}
  noCloudprovider: true
`, want: []string{`unknown field "spec.noCloudprovider"`}},
	})
}

const m3ctHeader = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3ClusterTemplate
`

func TestMetal3ClusterTemplateAdmission(t *testing.T) {
	// The template's spec is a Metal3Cluster spec: the same rules, under spec.template.spec.
	runAdmissionCases(t, "m3ct-admission", []admissionCase{
		{name: "valid", given: m3ctHeader + `
spec:
  template:
    metadata: {labels: {env: prod}}
    spec:
      controlPlaneEndpoint: {host: 10.0.0.1}
`},
		{name: "endpoint without host", given: m3ctHeader + `
spec:
  template:
    spec:
      controlPlaneEndpoint: {port: 6443}
`, want: []string{"spec.template.spec.controlPlaneEndpoint.host: Required value"}},
		{name: "contradicting cloud provider fields", given: m3ctHeader + `
spec:
  template:
    spec:
      controlPlaneEndpoint: {host: 10.0.0.1}
      noCloudProvider: true
      cloudProviderEnabled: true
`, want: []string{"spec.template.spec.noCloudProvider", "contradicts cloudProviderEnabled"}},
		{name: "no template", given: m3ctHeader + `
spec: {}
`, want: []string{"spec.template: Required value"}},
	})
}

func TestMetal3ClusterRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	// Times go through RFC 3339, which keeps seconds only.
	now := metav1.NewTime(time.Now().Truncate(time.Second))

	given := &infrav1.Metal3Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m3c-roundtrip", Namespace: "default"},
		Spec: infrav1.Metal3ClusterSpec{
			ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "192.168.111.249"}, // port left to the default
			NoCloudProvider:      ptr.To(true),
			CloudProviderEnabled: ptr.To(false),
			FailureDomains: []clusterv1.FailureDomain{
				{Name: "rack-1", ControlPlane: ptr.To(true), Attributes: map[string]string{"row": "a"}},
				{Name: "rack-2"},
			},
		},
	}
	g.Expect(env.Client.Create(ctx, given)).To(Succeed())

	got := &infrav1.Metal3Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(given), got)).To(Succeed())
	want := given.Spec.DeepCopy()
	want.ControlPlaneEndpoint.Port = 6443 // the documented default
	g.Expect(got.Spec).To(Equal(*want))
	g.Expect(got.CloudProviderEnabled()).To(BeFalse())

	got.Status = infrav1.Metal3ClusterStatus{
		Initialization: infrav1.Metal3ClusterInitializationStatus{Provisioned: ptr.To(true)},
		Conditions: []metav1.Condition{{
			Type: infrav1.BaremetalInfrastructureReadyCondition, Status: metav1.ConditionTrue,
			Reason: infrav1.Metal3ClusterReadyReason, LastTransitionTime: now,
		}},
		FailureDomains: got.Spec.FailureDomains,
		LastUpdated:    &now,
	}
	g.Expect(env.Client.Status().Update(ctx, got)).To(Succeed())

	again := &infrav1.Metal3Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(given), again)).To(Succeed())
	g.Expect(again.Status).To(Equal(got.Status))
	g.Expect(again.Spec).To(Equal(*want))
}

func TestMetal3ClusterTemplateRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	given := &infrav1.Metal3ClusterTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "m3ct-roundtrip", Namespace: "default"},
		Spec: infrav1.Metal3ClusterTemplateSpec{Template: infrav1.Metal3ClusterTemplateResource{
			ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"env": "prod"}, Annotations: map[string]string{"owner": "team-a"}},
			Spec: infrav1.Metal3ClusterSpec{
				ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "api.example.com", Port: 443},
				CloudProviderEnabled: ptr.To(true),
			},
		}},
	}
	g.Expect(env.Client.Create(ctx, given)).To(Succeed())

	got := &infrav1.Metal3ClusterTemplate{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(given), got)).To(Succeed())
	g.Expect(got.Spec).To(Equal(given.Spec))
}
