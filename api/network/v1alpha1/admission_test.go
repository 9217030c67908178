package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

func object(t *testing.T, kind, spec string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	content := map[string]any{}
	if err := yaml.Unmarshal([]byte(spec), &content); err != nil {
		t.Fatalf("test spec is not YAML: %v\n%s", err, spec)
	}
	u.Object = map[string]any{"spec": content}
	u.SetAPIVersion("network.metalwire.io/v1alpha1")
	u.SetKind(kind)
	u.SetNamespace("default")
	u.SetGenerateName(strings.ToLower(kind) + "-")
	return u
}

func TestAdmission(t *testing.T) {
	sw := "{name: s1, address: 10.0.0.1, networkOS: openvswitch}"
	sonicPair := "{name: l1, address: 10.0.0.1, networkOS: sonic}, {name: l2, address: 10.0.0.2, networkOS: sonic}"
	sonicSides := "{switch: l1, sourceAddress: 192.168.255.1, peerLink: PortChannel1}, {switch: l2, sourceAddress: 192.168.255.2, peerLink: PortChannel1}"
	cases := []struct{ name, kind, spec, want string }{
		{"a valid NetworkDevice", "NetworkDevice", "switches: [" + sw + "]", ""},
		{"a switch named twice", "NetworkDevice", "switches: [" + sw + ", " + sw + "]",
			"spec.switches: Invalid value: switch names must be unique within a NetworkDevice; rename the second switch of that name"},
		{"an inline password", "NetworkDevice", "switches: [{name: s1, address: 10.0.0.1, networkOS: openvswitch, pwd: '1234'}]",
			"spec.switches[0].pwd: Invalid value: credentials are not stored in a NetworkDevice; put them in a Secret and name it in credentialsRef (metalwire migrate does this for you)"},
		{"an inline user", "NetworkDevice", "switches: [{name: s1, address: 10.0.0.1, networkOS: openvswitch, user: root}]",
			"spec.switches[0].user: Invalid value: credentials are not stored in a NetworkDevice"},
		{"the seed's fos", "NetworkDevice", "switches: [{name: s1, address: 10.0.0.1, networkOS: fos}]",
			`spec.switches[0].networkOS: Unsupported value: "fos": supported values: "openvswitch", "openvswitch-ssh", "eos", "nxos", "junos", "sonic", "dellos10", "cumulus", "openconfig", "simulated", "equinix-metal"`},
		{"a switch without address or networkOS", "NetworkDevice", "switches: [{name: s1, networkOS: openvswitch}]",
			"spec.switches[0]: Invalid value: address and networkOS are required, unless bareMetalSwitchRef names a BareMetalSwitch to take them from"},
		{"a BareMetalSwitch as a switch", "NetworkDevice", "switches: [{name: s1, bareMetalSwitchRef: {name: tor1}, bridge: br0}]", ""},
		{"a BareMetalSwitch and an address", "NetworkDevice", "switches: [{name: s1, bareMetalSwitchRef: {name: tor1}, address: 10.0.0.1}]",
			"a switch taken from a BareMetalSwitch gets its address, port, macAddress, networkOS and credentials from it: remove them here, or remove bareMetalSwitchRef"},
		{"a bad management MAC", "NetworkDevice", "switches: [{name: s1, address: 10.0.0.1, networkOS: openvswitch, macAddress: 02-00-00}]",
			"spec.switches[0].macAddress: Invalid value"},
		{"an unknown drift policy", "NetworkDevice", "{switches: [" + sw + "], driftPolicy: ignore}",
			`spec.driftPolicy: Unsupported value: "ignore": supported values: "repair", "report"`},
		{"an Equinix Metal project", "NetworkDevice", "switches: [{name: metal, address: api.equinix.com, networkOS: equinix-metal, equinixMetal: {projectID: 0c2a5f3e-4b6d-4e7f-8a9b-1c2d3e4f5a6b, metro: da}}]", ""},
		{"an Equinix Metal switch without its project", "NetworkDevice", "switches: [{name: metal, address: api.equinix.com, networkOS: equinix-metal}]",
			"spec.switches[0].equinixMetal: Invalid value: a switch of networkOS equinix-metal needs equinixMetal.projectID and equinixMetal.metro"},
		{"a project id that is no UUID", "NetworkDevice", "switches: [{name: metal, address: api.equinix.com, networkOS: equinix-metal, equinixMetal: {projectID: my-project, metro: da}}]",
			"spec.switches[0].equinixMetal.projectID: Invalid value"},
		{"an MLAG pair", "NetworkDevice", "{switches: [" + sw + ", {name: s2, address: 10.0.0.2, networkOS: eos}], mlagPairs: [{name: p1, switches: [s1, s2], domain: 10}]}", ""},
		{"an MLAG pair of one switch twice", "NetworkDevice", "{switches: [" + sw + "], mlagPairs: [{name: p1, switches: [s1, s1], domain: 10}]}",
			"spec.mlagPairs[0].switches: Invalid value: an MLAG pair is two different switches; name the second switch of the pair"},
		{"an MLAG pair naming an unknown switch", "NetworkDevice", "{switches: [" + sw + "], mlagPairs: [{name: p1, switches: [s1, s9], domain: 10}]}",
			"spec.mlagPairs: Invalid value: mlagPairs[].switches names a switch that is not in spec.switches; name switches of this NetworkDevice"},
		{"an MLAG pair of three", "NetworkDevice", "{switches: [" + sw + "], mlagPairs: [{name: p1, switches: [s1, s2, s3], domain: 10}]}",
			"spec.mlagPairs[0].switches: Too many: 3: must have at most 2 items"},
		{"an MLAG pair without a domain", "NetworkDevice", "{switches: [" + sw + ", {name: s2, address: 10.0.0.2, networkOS: eos}], mlagPairs: [{name: p1, switches: [s1, s2]}]}",
			"spec.mlagPairs[0].domain: Required value"},
		{"two MLAG pairs of one name", "NetworkDevice", "{switches: [" + sw + ", {name: s2, address: 10.0.0.2, networkOS: eos}, {name: s3, address: 10.0.0.3, networkOS: eos}, {name: s4, address: 10.0.0.4, networkOS: eos}], mlagPairs: [{name: p1, switches: [s1, s2], domain: 10}, {name: p1, switches: [s3, s4], domain: 11}]}",
			"spec.mlagPairs[1]: Duplicate value"},
		{"a SONiC MCLAG pair", "NetworkDevice", "{switches: [" + sonicPair + "], mlagPairs: [{name: p1, switches: [l1, l2], domain: 10, sonic: [" + sonicSides + "]}]}", ""},
		{"a SONiC pair without its MCLAG addresses", "NetworkDevice", "{switches: [" + sonicPair + "], mlagPairs: [{name: p1, switches: [l1, l2], domain: 10}]}",
			"spec.mlagPairs: Invalid value: an MLAG pair with a networkOS sonic switch needs mlagPairs[].sonic (each switch's sourceAddress and peerLink)"},
		{"a SONiC pair's entry for another switch", "NetworkDevice", "{switches: [" + sonicPair + "], mlagPairs: [{name: p1, switches: [l1, l2], domain: 10, sonic: [{switch: l1, sourceAddress: 192.168.255.1, peerLink: PortChannel1}, {switch: l9, sourceAddress: 192.168.255.2, peerLink: PortChannel1}]}]}",
			"spec.mlagPairs[0].sonic: Invalid value: mlagPairs[].sonic has one entry for each switch of the pair; name the pair's two switches"},
		{"a SONiC pair of one address", "NetworkDevice", "{switches: [" + sonicPair + "], mlagPairs: [{name: p1, switches: [l1, l2], domain: 10, sonic: [{switch: l1, sourceAddress: 192.168.255.1, peerLink: PortChannel1}, {switch: l2, sourceAddress: 192.168.255.1, peerLink: PortChannel1}]}]}",
			"spec.mlagPairs[0].sonic: Invalid value: the two switches of a SONiC MCLAG pair have different sourceAddress values"},
		{"a SONiC MCLAG over IPv6", "NetworkDevice", "{switches: [" + sonicPair + "], mlagPairs: [{name: p1, switches: [l1, l2], domain: 10, sonic: [{switch: l1, sourceAddress: 'fd00::1', peerLink: PortChannel1}, {switch: l2, sourceAddress: 192.168.255.2, peerLink: PortChannel1}]}]}",
			`spec.mlagPairs[0].sonic[0].sourceAddress: Invalid value: "fd00::1": must be an IPv4 address`},
		{"a SONiC peer link that is no interface", "NetworkDevice", "{switches: [" + sonicPair + "], mlagPairs: [{name: p1, switches: [l1, l2], domain: 10, sonic: [{switch: l1, sourceAddress: 192.168.255.1, peerLink: Po1}, {switch: l2, sourceAddress: 192.168.255.2, peerLink: PortChannel1}]}]}",
			"spec.mlagPairs[0].sonic[0].peerLink: Invalid value"},
		{"a SONiC switch's aggregate range", "NetworkDevice", "switches: [{name: s1, address: 10.0.0.1, networkOS: sonic, aggregates: {first: 1000, last: 1999}}]", ""},
		{"an openconfig switch's aggregate range", "NetworkDevice", "switches: [{name: s1, address: 10.0.0.1, networkOS: openconfig, aggregates: {first: 100, last: 999, prefix: Port-Channel}}]", ""},
		{"an aggregate range upside down", "NetworkDevice", "switches: [{name: s1, address: 10.0.0.1, networkOS: sonic, aggregates: {first: 1999, last: 1000}}]",
			"spec.switches[0].aggregates.first: Invalid value: aggregates.first is above aggregates.last; give the lowest number first"},
		{"a SONiC range past PortChannel9999", "NetworkDevice", "switches: [{name: s1, address: 10.0.0.1, networkOS: sonic, aggregates: {first: 9000, last: 10999}}]",
			"spec.switches[0].aggregates: Invalid value: SONiC's port-channels are PortChannel0 to PortChannel9999"},
		{"a SONiC range with another prefix", "NetworkDevice", "switches: [{name: s1, address: 10.0.0.1, networkOS: sonic, aggregates: {first: 1, last: 99, prefix: Po}}]",
			"spec.switches[0].aggregates: Invalid value: SONiC's port-channels are PortChannel0 to PortChannel9999"},
		{"an openconfig range without a prefix", "NetworkDevice", "switches: [{name: s1, address: 10.0.0.1, networkOS: openconfig, aggregates: {first: 1, last: 99}}]",
			"spec.switches[0].aggregates.prefix: Invalid value: an openconfig switch names its aggregates as its vendor does: set aggregates.prefix"},
		{"an aggregate prefix that is no name", "NetworkDevice", "switches: [{name: s1, address: 10.0.0.1, networkOS: openconfig, aggregates: {first: 1, last: 99, prefix: 'ae;rm'}}]",
			"spec.switches[0].aggregates.prefix: Invalid value"},
		{"an aggregate range on EOS", "NetworkDevice", "switches: [{name: s1, address: 10.0.0.1, networkOS: eos, aggregates: {first: 1, last: 99}}]",
			"spec.switches[0].aggregates: Invalid value: aggregates numbers the bonds of networkOS sonic and openconfig only; the others name their bonds themselves: remove aggregates"},
		{"a switch in two MLAG pairs", "NetworkDevice", "{switches: [" + sw + ", {name: s2, address: 10.0.0.2, networkOS: eos}, {name: s3, address: 10.0.0.3, networkOS: eos}], mlagPairs: [{name: p1, switches: [s1, s2], domain: 10}, {name: p2, switches: [s2, s3], domain: 11}]}",
			"spec.mlagPairs: Invalid value: a switch is in two mlagPairs; a switch belongs to at most one pair"},
		{"an LACP bond", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, linkAggregation: 2, lag: {mode: lacp, lacpRate: fast}}]}", ""},
		{"a static bond", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, linkAggregation: 4, lag: {mode: static}}]}", ""},
		{"a bond of one card", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, lag: {mode: lacp}}]}",
			"spec.networks[0].lag: Invalid value: lag needs linkAggregation 2 or more: a bond is made of several cards; set linkAggregation or remove lag"},
		{"a bond of linkAggregation 1", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, linkAggregation: 1, lag: {}}]}",
			"spec.networks[0].lag: Invalid value: lag needs linkAggregation 2 or more"},
		{"an unknown bond mode", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, linkAggregation: 2, lag: {mode: balance-rr}}]}",
			`spec.networks[0].lag.mode: Unsupported value: "balance-rr": supported values: "lacp", "static"`},
		{"an unknown LACP rate", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, linkAggregation: 2, lag: {lacpRate: medium}}]}",
			`spec.networks[0].lag.lacpRate: Unsupported value: "medium": supported values: "slow", "fast"`},
		{"a fast rate on a static bond", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, linkAggregation: 2, lag: {mode: static, lacpRate: fast}}]}",
			"spec.networks[0].lag.lacpRate: Invalid value: lag.lacpRate fast needs lag.mode lacp: a static bond sends no LACP frames; remove lacpRate or set mode lacp"},
		{"a valid ClusterNetwork", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, vlanID: 1500}, {name: b}]}", ""},
		{"a range past 4094", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 4000-4095, networks: [{name: a}]}",
			"spec.vlanRange: Invalid value: \"4000-4095\": vlanRange must lie within 1-4094, the VLAN ids a switch accepts"},
		{"a range from 0", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 0-10, networks: [{name: a}]}",
			"vlanRange must lie within 1-4094"},
		{"a range backwards", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 2000-1000, networks: [{name: a}]}",
			"spec.vlanRange: Invalid value: \"2000-1000\": vlanRange starts after it ends; write the lower id first"},
		{"a pin outside the range", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, vlanID: 10}]}",
			"spec.networks: Invalid value: a pinned networks[].vlanID lies outside vlanRange; pin an id inside the range or widen vlanRange"},
		{"two pins alike", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, vlanID: 1000}, {name: b, vlanID: 1000}]}",
			"two networks pin the same vlanID"},
		{"a network named twice", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a}, {name: a}]}",
			"network names must be unique in a ClusterNetwork"},
		{"an access list", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, acl: [{direction: ingress, protocol: ssh, action: deny}, {direction: egress, protocol: tcp:8000-8080, action: allow, remote: 10.0.0.0/8}, {direction: ingress, protocol: udp:53, action: allow, remote: 2001:db8::/32}], aclDefault: deny, portStatus: down}]}", ""},
		{"an ACL rule without an action", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, acl: [{direction: ingress, protocol: ssh}]}]}",
			"spec.networks[0].acl[0].action: Required value"},
		{"an ACL direction", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, acl: [{direction: inbound, protocol: ssh, action: deny}]}]}",
			`spec.networks[0].acl[0].direction: Unsupported value: "inbound": supported values: "ingress", "egress"`},
		{"an ACL action", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, acl: [{direction: ingress, protocol: ssh, action: drop}]}]}",
			`spec.networks[0].acl[0].action: Unsupported value: "drop": supported values: "allow", "deny"`},
		{"an ACL protocol", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, acl: [{direction: ingress, protocol: sctp, action: deny}]}]}",
			"spec.networks[0].acl[0].protocol: Invalid value: \"sctp\": protocol must be all, icmp, ssh, http, https, tcp:N, udp:N, tcp:N-M or udp:N-M"},
		{"an ACL port of 0", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, acl: [{direction: ingress, protocol: 'tcp:0', action: deny}]}]}",
			"protocol ports are numbers from 1 to 65535"},
		{"an ACL port past 65535", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, acl: [{direction: ingress, protocol: 'udp:10-70000', action: deny}]}]}",
			"protocol ports are numbers from 1 to 65535"},
		{"an ACL port range backwards", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, acl: [{direction: ingress, protocol: 'tcp:90-80', action: deny}]}]}",
			"protocol's port range starts after it ends; write the lower port first"},
		{"an ACL remote", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, acl: [{direction: ingress, protocol: all, action: deny, remote: 10.0.0.1}]}]}",
			"spec.networks[0].acl[0].remote: Invalid value: \"10.0.0.1\": remote must be a CIDR such as 10.0.0.0/8"},
		{"an ACL remote with host bits", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, acl: [{direction: ingress, protocol: all, action: deny, remote: 10.1.2.3/8}]}]}",
			"spec.networks[0].acl[0].remote: Invalid value: \"10.1.2.3/8\": remote has host bits set; write the network's address, e.g. 10.0.0.0/8 rather than 10.1.2.3/8"},
		{"an ACL default", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, acl: [{direction: ingress, protocol: all, action: deny}], aclDefault: reject}]}",
			`spec.networks[0].aclDefault: Unsupported value: "reject": supported values: "allow", "deny"`},
		{"a port status", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, portStatus: shut}]}",
			`spec.networks[0].portStatus: Unsupported value: "shut": supported values: "up", "down"`},
		{"an OpenFlow remote", "NetworkDevice", "{switches: [{name: s1, address: 10.0.0.1, networkOS: openvswitch, bridge: br0, openFlowRemote: 'tcp:10.0.0.1:6653'}]}", ""},
		{"an OpenFlow remote in URL form", "NetworkDevice", "{switches: [{name: s1, address: 10.0.0.1, networkOS: openvswitch, openFlowRemote: 'http://10.0.0.1:6653'}]}",
			"spec.switches[0].openFlowRemote: Invalid value: \"http://10.0.0.1:6653\": spec.switches[0].openFlowRemote in body should match"},
		{"vxlan", "ClusterNetwork", "{networkDeviceRef: nd1, vlanRange: 1000-1999, networks: [{name: a, type: vxlan}]}",
			`spec.networks[0].type: Unsupported value: "vxlan": supported values: "vlan"`},
		{"a valid NIC", "NIC", "{node: bm0, networkDeviceRef: nd1, nics: [{networkDevice: {switch: {name: s1, port: 1}}}, {networkDevice: {switch: {name: s1, port: eth2}}}]}", ""},
		{"a SmartNIC's switch", "NIC", "{node: bm0, networkDeviceRef: nd1, nics: [{networkDevice: {switch: {name: s1, port: 1}}, capability: {smartNIC: true}, smartNIC: {switch: dpu1, hostPort: pf0hpf, uplinkPort: p0}}]}", ""},
		{"a card switch on a plain card", "NIC", "{node: bm0, networkDeviceRef: nd1, nics: [{networkDevice: {switch: {name: s1, port: 1}}, smartNIC: {switch: dpu1, hostPort: pf0hpf, uplinkPort: p0}}]}",
			"smartNIC names the card's own switch: set capability.smartNIC: true on this card, or remove smartNIC"},
		{"a card switch of one port", "NIC", "{node: bm0, networkDeviceRef: nd1, nics: [{networkDevice: {switch: {name: s1, port: 1}}, capability: {smartNIC: true}, smartNIC: {switch: dpu1, hostPort: p0, uplinkPort: p0}}]}",
			"smartNIC.hostPort and smartNIC.uplinkPort are the card switch's two ends; name two different ports"},
		{"a card switch without its uplink", "NIC", "{node: bm0, networkDeviceRef: nd1, nics: [{networkDevice: {switch: {name: s1, port: 1}}, capability: {smartNIC: true}, smartNIC: {switch: dpu1, hostPort: p0}}]}",
			"spec.nics[0].smartNIC.uplinkPort: Required value"},
		{"two cards on one port", "NIC", "{node: bm0, networkDeviceRef: nd1, nics: [{networkDevice: {switch: {name: s1, port: 1}}}, {networkDevice: {switch: {name: s1, port: 1}}}]}",
			"spec.nics: Invalid value: two network cards are cabled to one switch port; each entry of nics needs its own switch port"},
	}
	// Every networkOS metalwire has a driver for is accepted.
	for _, os := range []string{"openvswitch", "openvswitch-ssh", "eos", "nxos", "junos", "sonic", "dellos10", "cumulus", "openconfig", "simulated"} {
		cases = append(cases, struct{ name, kind, spec, want string }{"networkOS " + os, "NetworkDevice",
			"switches: [{name: s1, address: 10.0.0.1, networkOS: " + os + "}]", ""})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(context.Background(), object(t, c.kind, c.spec))
			if c.want == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(c.want)))
		})
	}
}

// A NIC's status lists, per card in spec order, its network or null, as the seed shows.
func TestNICStatusKeepsNullForAnUnusedCard(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	nic := object(t, "NIC", "{node: bm0, networkDeviceRef: nd1, nics: [{networkDevice: {switch: {name: s1, port: 1}}}, {networkDevice: {switch: {name: s1, port: 2}}}]}")
	g.Expect(env.Client.Create(ctx, nic)).To(Succeed())
	nic.Object["status"] = map[string]any{"clusterNetwork": "cn1", "nics": []any{map[string]any{"network": "control", "vlanID": int64(1001)}, nil}}
	g.Expect(env.Client.Status().Update(ctx, nic)).To(Succeed())
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(nic.GroupVersionKind())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nic), got)).To(Succeed())
	nics, _, _ := unstructured.NestedSlice(got.Object, "status", "nics")
	g.Expect(nics).To(Equal([]any{map[string]any{"network": "control", "vlanID": int64(1001)}, nil}))
}
