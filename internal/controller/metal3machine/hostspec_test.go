package metal3machine

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

func TestProviderID(t *testing.T) {
	g := NewWithT(t)
	host := &bmov1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "node-0"}}
	m3m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "cp-abcde"}}
	g.Expect(providerID(host, m3m)).To(Equal("metal3://metal3/node-0/cp-abcde"))
}

func TestProvision(t *testing.T) {
	data := hostData{
		UserData:    &corev1.SecretReference{Namespace: "ns", Name: "bootstrap"},
		MetaData:    &corev1.SecretReference{Namespace: "ns", Name: "meta"},
		NetworkData: &corev1.SecretReference{Namespace: "ns", Name: "net"},
	}
	image := infrav1.Image{URL: "http://img/u.qcow2", Checksum: ptr.To("abc"), ChecksumType: ptr.To("sha256"), DiskFormat: ptr.To("qcow2")}
	tests := []struct {
		name  string
		given *bmov1.BareMetalHost
		spec  infrav1.Metal3MachineSpec
		want  bmov1.BareMetalHostSpec
	}{
		{
			name:  "a fresh host gets image, data and power",
			given: &bmov1.BareMetalHost{},
			spec:  infrav1.Metal3MachineSpec{Image: image},
			want: bmov1.BareMetalHostSpec{
				Online:   true,
				Image:    &bmov1.Image{URL: "http://img/u.qcow2", Checksum: "abc", ChecksumType: "sha256", DiskFormat: ptr.To("qcow2")},
				UserData: data.UserData, MetaData: data.MetaData, NetworkData: data.NetworkData,
			},
		},
		{
			name:  "customDeploy instead of an image",
			given: &bmov1.BareMetalHost{},
			spec:  infrav1.Metal3MachineSpec{CustomDeploy: &infrav1.CustomDeploy{Method: "install_coreos"}},
			want: bmov1.BareMetalHostSpec{
				Online: true, CustomDeploy: &bmov1.CustomDeploy{Method: "install_coreos"},
				UserData: data.UserData, MetaData: data.MetaData, NetworkData: data.NetworkData,
			},
		},
		{
			name: "a host with an image keeps it and its power state",
			given: &bmov1.BareMetalHost{Spec: bmov1.BareMetalHostSpec{
				Online: false, Image: &bmov1.Image{URL: "http://img/old.qcow2", Checksum: "old"},
			}},
			spec: infrav1.Metal3MachineSpec{Image: image},
			want: bmov1.BareMetalHostSpec{
				Online: false, Image: &bmov1.Image{URL: "http://img/old.qcow2", Checksum: "old"},
				UserData: data.UserData, MetaData: data.MetaData, NetworkData: data.NetworkData,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			provision(tt.given, &infrav1.Metal3Machine{Spec: tt.spec}, data)
			g.Expect(tt.given.Spec).To(Equal(tt.want))
		})
	}
}

func TestClaimAndRelease(t *testing.T) {
	g := NewWithT(t)
	host := &bmov1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{
		Name: "h", Namespace: "ns",
		Labels:      map[string]string{"rack": "r1"},
		Annotations: map[string]string{bmov1.PausedAnnotation: infrav1.BareMetalHostPausedByValue, "keep": "me"},
	}}
	m3m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "ns"}}

	claim(host, m3m, "c1")
	g.Expect(consumedBy(host, m3m)).To(BeTrue())
	g.Expect(host.Spec.ConsumerRef.APIVersion).To(Equal("infrastructure.cluster.x-k8s.io/v1beta2"))
	g.Expect(host.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))

	provision(host, &infrav1.Metal3Machine{Spec: infrav1.Metal3MachineSpec{Image: infrav1.Image{URL: "http://i", Checksum: ptr.To("c")}}},
		hostData{UserData: &corev1.SecretReference{Name: "u"}})
	release(host, false)
	g.Expect(host.Spec).To(Equal(bmov1.BareMetalHostSpec{}))
	g.Expect(host.Labels).To(Equal(map[string]string{"rack": "r1"}))
	g.Expect(host.Annotations).To(Equal(map[string]string{"keep": "me"}), "our pause goes with the release, other annotations stay")
}

func TestPauseTouchesOnlyOurPause(t *testing.T) {
	tests := []struct {
		name        string
		given       map[string]string
		op          func(*bmov1.BareMetalHost) bool
		wantChanged bool
		want        map[string]string
	}{
		{"pause an unpaused host", nil, pause, true, map[string]string{bmov1.PausedAnnotation: "metal3.io/capm3"}},
		{"pause leaves someone else's pause", map[string]string{bmov1.PausedAnnotation: "admin"}, pause, false, map[string]string{bmov1.PausedAnnotation: "admin"}},
		{"unpause removes ours", map[string]string{bmov1.PausedAnnotation: "metal3.io/capm3", "x": "y"}, unpause, true, map[string]string{"x": "y"}},
		{"unpause leaves someone else's", map[string]string{bmov1.PausedAnnotation: "admin"}, unpause, false, map[string]string{bmov1.PausedAnnotation: "admin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			h := &bmov1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Annotations: tt.given}}
			g.Expect(tt.op(h)).To(Equal(tt.wantChanged))
			g.Expect(h.Annotations).To(Equal(tt.want))
		})
	}
}

func TestDeprovisioningStates(t *testing.T) {
	tests := []struct {
		given bmov1.ProvisioningState
		want  bool
	}{
		{bmov1.StateProvisioning, true},
		{bmov1.StateProvisioned, true},
		{bmov1.StateDeprovisioning, true},
		{bmov1.StateExternallyProvisioned, true},
		{bmov1.StateAvailable, false},
		{bmov1.StateReady, false},
		{bmov1.StateNone, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.given), func(t *testing.T) {
			h := &bmov1.BareMetalHost{}
			h.Status.Provisioning.State = tt.given
			NewWithT(t).Expect(deprovisioning(h)).To(Equal(tt.want))
		})
	}
}

func TestShapeHost(t *testing.T) {
	mode := infrav1.CleaningModeDisabled
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", Namespace: "ns"},
		Spec: infrav1.Metal3MachineSpec{
			Image:                 infrav1.Image{URL: "http://i", Checksum: ptr.To("c")},
			AutomatedCleaningMode: &mode,
		},
	}
	data := hostData{UserData: &corev1.SecretReference{Namespace: "ns", Name: "u"}}
	tests := []struct {
		name      string
		given     *bmov1.BareMetalHost
		dataKnown bool
		wantImage bool
	}{
		{"data unknown: claimed, unpaused and its cleaning mode set, not provisioned",
			&bmov1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{bmov1.PausedAnnotation: infrav1.BareMetalHostPausedByValue}}},
			false, false},
		{"first provisioning", &bmov1.BareMetalHost{}, true, true},
		{"a provisioned host still gets the machine's cleaning mode",
			&bmov1.BareMetalHost{Spec: bmov1.BareMetalHostSpec{Image: &bmov1.Image{URL: "http://old"}, AutomatedCleaningMode: "metadata"}},
			true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			shapeHost(tt.given, m3m, "c1", data, tt.dataKnown)
			g.Expect(consumedBy(tt.given, m3m)).To(BeTrue())
			g.Expect(tt.given.Annotations).NotTo(HaveKey(bmov1.PausedAnnotation))
			g.Expect(tt.given.Spec.Image != nil).To(Equal(tt.wantImage))
			g.Expect(tt.given.Spec.AutomatedCleaningMode).To(Equal("disabled"))
			if tt.dataKnown {
				g.Expect(tt.given.Spec.UserData).To(Equal(data.UserData))
			} else {
				g.Expect(tt.given.Spec.UserData).To(BeNil())
			}
		})
	}
}

// keepPoweredOn follows upstream's table: disablePowerOff always on; fast track on unless cleaning
// is disabled; otherwise off.
func TestDeprovisionPower(t *testing.T) {
	tests := []struct {
		fastTrack       bool
		cleaning        string
		disablePowerOff bool
		wantOnline      bool
	}{
		{false, "disabled", true, true},
		{true, "disabled", true, true},
		{false, "metadata", true, true},
		{true, "metadata", true, true},
		{false, "disabled", false, false},
		{true, "disabled", false, false},
		{false, "metadata", false, false},
		{true, "metadata", false, true},
		{true, "", false, true}, // BMO's default is metadata
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("fastTrack=%v cleaning=%q disablePowerOff=%v", tt.fastTrack, tt.cleaning, tt.disablePowerOff), func(t *testing.T) {
			h := &bmov1.BareMetalHost{Spec: bmov1.BareMetalHostSpec{Online: true, AutomatedCleaningMode: tt.cleaning, DisablePowerOff: tt.disablePowerOff, Image: &bmov1.Image{URL: "http://i"}}}
			deprovision(h, tt.fastTrack)
			NewWithT(t).Expect(h.Spec.Online).To(Equal(tt.wantOnline))
			NewWithT(t).Expect(h.Spec.Image).To(BeNil())
		})
	}
}
