package render_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render"
)

func TestMetaDataSources(t *testing.T) {
	tests := []struct {
		name  string
		given infrav1.MetaData
		want  map[string]string // besides providerid
	}{
		{"strings", infrav1.MetaData{Strings: []infrav1.MetaDataString{{Key: "a", Value: "b"}}}, map[string]string{"a": "b"}},
		{"objectNames", infrav1.MetaData{ObjectNames: []infrav1.MetaDataObjectName{
			{Key: "m", Object: "machine"}, {Key: "m3m", Object: "metal3machine"}, {Key: "bmh", Object: "baremetalhost"},
		}}, map[string]string{"m": "machine-a", "m3m": "m3m-a", "bmh": "host-a"}},
		{"indexes: prefix + (offset + index*step) + suffix", infrav1.MetaData{Indexes: []infrav1.MetaDataIndex{
			{Key: "i", Offset: ptr.To[int32](10), Step: 3, Prefix: "node-", Suffix: ".lab"},
		}}, map[string]string{"i": "node-16.lab"}},
		{"indexes: step defaults to 1", infrav1.MetaData{Indexes: []infrav1.MetaDataIndex{{Key: "i"}}}, map[string]string{"i": "2"}},
		{"namespaces", infrav1.MetaData{Namespaces: []infrav1.MetaDataNamespace{{Key: "ns"}}}, map[string]string{"ns": "ns1"}},
		{"fromLabels, absent is empty", infrav1.MetaData{FromLabels: []infrav1.MetaDataFromLabel{
			{Key: "m", Object: "machine", Label: "tier"}, {Key: "h", Object: "baremetalhost", Label: "tier"}, {Key: "x", Object: "metal3machine", Label: "nope"},
		}}, map[string]string{"m": "gold", "h": "bronze", "x": ""}},
		{"fromAnnotations, absent is empty", infrav1.MetaData{FromAnnotations: []infrav1.MetaDataFromAnnotation{
			{Key: "m3m", Object: "metal3machine", Annotation: "note"}, {Key: "x", Object: "baremetalhost", Annotation: "nope"},
		}}, map[string]string{"m3m": "from-m3m", "x": ""}},
		{"fromHostInterfaces by name and boot MAC", infrav1.MetaData{FromHostInterfaces: []infrav1.MetaDataHostInterface{
			{Key: "n", Interface: "eno2"}, {Key: "b", FromBootMAC: ptr.To(true)},
		}}, map[string]string{"n": "52:54:00:00:00:02", "b": "52:54:00:00:00:01"}},
		{"pools by name and by apiGroup/kind", infrav1.MetaData{
			IPAddressesFromPool: []infrav1.FromPool{{Key: "ip", Name: "pool4"}, {Key: "ic", Name: "incluster", APIGroup: "ipam.cluster.x-k8s.io", Kind: "InClusterIPPool"}},
			PrefixesFromPool:    []infrav1.FromPool{{Key: "prefix", Name: "pool6"}},
			GatewaysFromPool:    []infrav1.FromPool{{Key: "gw", Name: "pool4"}},
			DNSServersFromPool:  []infrav1.FromPool{{Key: "dns", Name: "pool4"}},
		}, map[string]string{"ip": "192.168.10.5", "ic": "10.1.0.9", "prefix": "64", "gw": "192.168.10.1", "dns": "192.168.10.2,192.168.10.3"}},
		{"seed-era ipAddresses from the index", infrav1.MetaData{IPAddresses: []infrav1.MetaDataIPAddress{
			{Key: "ip", Start: ptr.To[infrav1.IPAddress]("10.0.0.10"), End: ptr.To[infrav1.IPAddress]("10.0.0.20"), Step: 5},
			{Key: "fromsubnet", Subnet: ptr.To[infrav1.IPSubnet]("10.5.0.0/24")},
		}}, map[string]string{"ip": "10.0.0.20", "fromsubnet": "10.5.0.3"}},
		{"later sources win: strings over objectNames over indexes over fromHostInterfaces", infrav1.MetaData{
			FromHostInterfaces: []infrav1.MetaDataHostInterface{{Key: "k", Interface: "eno1"}, {Key: "j", Interface: "eno1"}, {Key: "l", Interface: "eno1"}},
			Indexes:            []infrav1.MetaDataIndex{{Key: "k"}, {Key: "j"}},
			ObjectNames:        []infrav1.MetaDataObjectName{{Key: "k", Object: "baremetalhost"}},
			Strings:            []infrav1.MetaDataString{{Key: "k", Value: "string wins"}},
		}, map[string]string{"k": "string wins", "j": "2", "l": "52:54:00:00:00:01"}},
		{"providerid is always written and a template cannot override it", infrav1.MetaData{Strings: []infrav1.MetaDataString{{Key: "providerid", Value: "mine"}}},
			map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := render.MetaData(&tt.given, hostFacts())
			g.Expect(err).NotTo(HaveOccurred())
			want := map[string]string{"providerid": "ns1/host-a/m3m-a"}
			for k, v := range tt.want {
				want[k] = v
			}
			g.Expect(got).To(Equal(want))
		})
	}
}

func TestMetaDataMarshalsSortedYAML(t *testing.T) {
	g := NewWithT(t)
	b, err := render.MarshalMetaData(map[string]string{"zeta": "1", "alpha": "2", "mid": "true"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(b)).To(Equal("alpha: \"2\"\nmid: \"true\"\nzeta: \"1\"\n"), "values stay strings for cloud-init, keys sorted")
}

func TestMetaDataErrors(t *testing.T) {
	tests := []struct {
		name      string
		given     infrav1.MetaData
		facts     func(*render.Facts)
		want      string
		retryable bool
	}{
		{"NIC not on the host lists the ones that are",
			infrav1.MetaData{FromHostInterfaces: []infrav1.MetaDataHostInterface{{Key: "k", Interface: "eth7"}}}, nil,
			`metaData.fromHostInterfaces[0].interface: host host-a has no NIC "eth7"; its NICs are eno1, eno2`, false},
		{"host not inspected yet is retryable",
			infrav1.MetaData{FromHostInterfaces: []infrav1.MetaDataHostInterface{{Key: "k", Interface: "eno1"}}}, func(f *render.Facts) { f.NICs = nil },
			`metaData.fromHostInterfaces[0].interface: host host-a has no inspected NICs yet`, true},
		{"boot MAC missing",
			infrav1.MetaData{FromHostInterfaces: []infrav1.MetaDataHostInterface{{Key: "k", FromBootMAC: ptr.To(true)}}}, func(f *render.Facts) { f.BootMAC = "" },
			`metaData.fromHostInterfaces[0].fromBootMAC: host host-a has no spec.bootMACAddress`, false},
		{"address past the end of its range",
			infrav1.MetaData{IPAddresses: []infrav1.MetaDataIPAddress{{Key: "ip", Start: ptr.To[infrav1.IPAddress]("10.0.0.10"), End: ptr.To[infrav1.IPAddress]("10.0.0.11")}}}, nil,
			`metaData.ipAddresses[0].end: index 2 gives 10.0.0.12, past end 10.0.0.11: raise end, or take addresses from an IP pool`, false},
		{"pool address not allocated yet is retryable and names the pool",
			infrav1.MetaData{IPAddressesFromPool: []infrav1.FromPool{{Key: "ip", Name: "later"}}}, nil,
			`metaData.ipAddressesFromPool[0].name: waiting for an address from pool later`, true},
		{"a pool of another kind is not the IPPool of the same name",
			infrav1.MetaData{GatewaysFromPool: []infrav1.FromPool{{Key: "gw", Name: "pool4", APIGroup: "ipam.cluster.x-k8s.io", Kind: "InClusterIPPool"}}}, nil,
			`metaData.gatewaysFromPool[0].name: waiting for an address from pool InClusterIPPool.ipam.cluster.x-k8s.io/pool4`, true},
		{"machine before provisioning",
			infrav1.MetaData{ObjectNames: []infrav1.MetaDataObjectName{{Key: "k", Object: "machine"}}}, func(f *render.Facts) { f.Machine = nil },
			`metaData.objectNames[0].object: object machine is not available before provisioning; use baremetalhost`, false},
		{"providerid needs the Metal3Machine", infrav1.MetaData{}, func(f *render.Facts) { f.Metal3Machine = nil },
			`metaData: providerid (<namespace>/<host>/<metal3machine>) needs object metal3machine`, false},
		{"unknown object kind",
			infrav1.MetaData{FromLabels: []infrav1.MetaDataFromLabel{{Key: "k", Object: "cluster", Label: "x"}}}, nil,
			`metaData.fromLabels[0].object: unknown object "cluster"; use machine, metal3machine or baremetalhost`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f := hostFacts()
			if tt.facts != nil {
				tt.facts(f)
			}
			_, err := render.MetaData(&tt.given, f)
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
			g.Expect(render.IsRetryable(err)).To(Equal(tt.retryable))
		})
	}
}
