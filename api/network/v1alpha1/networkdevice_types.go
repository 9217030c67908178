package v1alpha1

import (
	"cmp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NetworkOS names the switch operating system, and so the driver that manages a switch.
// +kubebuilder:validation:Enum=openvswitch;openvswitch-ssh;eos;nxos;junos;sonic;dellos10;cumulus;openconfig;simulated;equinix-metal
type NetworkOS string

const (
	// NetworkOSOpenvSwitch manages an Open vSwitch through the OVSDB protocol (default port 6640).
	NetworkOSOpenvSwitch NetworkOS = "openvswitch"
	// NetworkOSOpenvSwitchSSH manages an Open vSwitch with ovs-vsctl over SSH (default port 22).
	NetworkOSOpenvSwitchSSH NetworkOS = "openvswitch-ssh"
	// NetworkOSEOS manages an Arista EOS switch over SSH (its CLI, JSON read-back).
	NetworkOSEOS NetworkOS = "eos"
	// NetworkOSNXOS manages a Cisco NX-OS switch over SSH.
	NetworkOSNXOS NetworkOS = "nxos"
	// NetworkOSJunos manages a Juniper Junos (ELS) switch over SSH, one commit per batch.
	NetworkOSJunos NetworkOS = "junos"
	// NetworkOSSONiC manages a SONiC switch over SSH (its config and show commands).
	NetworkOSSONiC NetworkOS = "sonic"
	// NetworkOSDellOS10 manages a Dell SmartFabric OS10 switch over SSH.
	NetworkOSDellOS10 NetworkOS = "dellos10"
	// NetworkOSCumulus manages an NVIDIA Cumulus Linux switch with NVUE (nv) over SSH.
	NetworkOSCumulus NetworkOS = "cumulus"
	// NetworkOSOpenConfig manages a switch that serves gNMI with the OpenConfig models.
	NetworkOSOpenConfig NetworkOS = "openconfig"
	// NetworkOSSimulated is dev mode's simulated switch, a stand-in that configures nothing
	// real. Only `metalwire dev` and `make demo` have a driver for it; the manager users deploy
	// reports such a switch unreachable ("no switch driver for networkOS simulated").
	NetworkOSSimulated NetworkOS = "simulated"
	// NetworkOSEquinixMetal manages the ports of an Equinix Metal project's devices through the
	// Metal API: the "switch" is the project (equinixMetal: projectID, metro), its ports are the
	// devices' ports, named "<device id>/<port>" (bond0, eth0, eth1).
	NetworkOSEquinixMetal NetworkOS = "equinix-metal"
)

// EquinixMetalProject is the Equinix Metal project whose devices' ports a switch of networkOS
// equinix-metal manages, and the metro whose VLANs (virtual networks) it uses.
type EquinixMetalProject struct {
	// ProjectID is the project's UUID.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	ProjectID string `json:"projectID"`
	// Metro is the metro code ("da", "sv") whose virtual networks the networks' VLAN ids
	// (VXLANs) are looked up in. metalwire does not create virtual networks: create them in
	// the project first.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]{2,3}$`
	Metro string `json:"metro"`
}

// SecretReference names a Secret in the object's namespace.
type SecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// LocalObjectReference names an object in the referrer's namespace.
type LocalObjectReference struct {
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// AggregateRange is the aggregate interface numbers metalwire owns on a switch, first to last,
// and the name they carry before the number.
//
// +kubebuilder:validation:XValidation:rule="self.first <= self.last",message="aggregates.first is above aggregates.last; give the lowest number first",fieldPath=".first"
type AggregateRange struct {
	// First is the lowest aggregate number metalwire may use.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	First int32 `json:"first"`
	// Last is the highest. A wide range (hundreds of numbers) keeps two bonds' names from
	// landing on one number; when they do, the second bond is refused, naming the first.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	Last int32 `json:"last"`
	// Prefix is the aggregate interface's name before its number: the vendor's (openconfig:
	// "Port-Channel" on EOS, "PortChannel" on SONiC, "ae" on Junos, "lag" on SR Linux; sonic:
	// PortChannel, the default).
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z_-]{0,15}$`
	// +optional
	Prefix string `json:"prefix,omitempty"`
}

// Switch is one switch of a NetworkDevice and how to reach its management interface.
//
// +kubebuilder:validation:XValidation:rule="!has(self.aggregates) || !has(self.networkOS) || self.networkOS == 'sonic' || self.networkOS == 'openconfig'",message="aggregates numbers the bonds of networkOS sonic and openconfig only; the others name their bonds themselves: remove aggregates",fieldPath=".aggregates"
// +kubebuilder:validation:XValidation:rule="!has(self.aggregates) || !has(self.networkOS) || self.networkOS != 'sonic' || (self.aggregates.last <= 9999 && (!has(self.aggregates.prefix) || self.aggregates.prefix == 'PortChannel'))",message="SONiC's port-channels are PortChannel0 to PortChannel9999: keep aggregates.last at most 9999 and leave aggregates.prefix unset (or PortChannel)",fieldPath=".aggregates"
// +kubebuilder:validation:XValidation:rule="!has(self.aggregates) || !has(self.networkOS) || self.networkOS != 'openconfig' || has(self.aggregates.prefix)",message="an openconfig switch names its aggregates as its vendor does: set aggregates.prefix (Port-Channel on EOS, PortChannel on SONiC, ae on Junos, lag on SR Linux)",fieldPath=".aggregates.prefix"
// +kubebuilder:validation:XValidation:rule="has(self.bareMetalSwitchRef) || (has(self.address) && has(self.networkOS))",message="address and networkOS are required, unless bareMetalSwitchRef names a BareMetalSwitch to take them from"
// +kubebuilder:validation:XValidation:rule="!has(self.bareMetalSwitchRef) || !(has(self.address) || has(self.networkOS) || has(self.port) || has(self.credentialsRef) || has(self.macAddress))",message="a switch taken from a BareMetalSwitch gets its address, port, macAddress, networkOS and credentials from it: remove them here, or remove bareMetalSwitchRef"
// +kubebuilder:validation:XValidation:rule="!has(self.user)",message="credentials are not stored in a NetworkDevice; put them in a Secret and name it in credentialsRef (metalwire migrate does this for you)",fieldPath=".user"
// +kubebuilder:validation:XValidation:rule="!has(self.networkOS) || self.networkOS != 'equinix-metal' || has(self.equinixMetal)",message="a switch of networkOS equinix-metal needs equinixMetal.projectID and equinixMetal.metro",fieldPath=".equinixMetal"
// +kubebuilder:validation:XValidation:rule="!has(self.pwd)",message="credentials are not stored in a NetworkDevice; put them in a Secret and name it in credentialsRef (metalwire migrate does this for you)",fieldPath=".pwd"
type Switch struct {
	// Name identifies the switch within the NetworkDevice; NICs name it in
	// spec.nics[].networkDevice.switch.name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Address is the switch's management address: an IP address or DNS name. For openvswitch it
	// may also be a full OVSDB remote (tcp:10.0.0.1:6640, ssl:10.0.0.1:6640,
	// unix:/run/openvswitch/db.sock). The seed's "ip".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Address string `json:"address,omitempty"`

	// Port is the management port. Unset: the networkOS default (6640 for openvswitch, 9339 for
	// openconfig, 22 for the SSH ones).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// NetworkOS is the switch's operating system: openvswitch (OVSDB), openvswitch-ssh
	// (ovs-vsctl over SSH), eos, nxos, junos, sonic, dellos10, cumulus (their CLIs over SSH) or
	// openconfig (gNMI); docs/switch-drivers.md lists what each supports. simulated is dev mode's
	// stand-in switch, which configures nothing.
	// +optional
	NetworkOS NetworkOS `json:"networkOS,omitempty"`

	// BareMetalSwitchRef takes the switch from baremetal-operator's BareMetalSwitch of that name
	// in this namespace: its address, port, macAddress, credentials Secret, and its deviceType
	// as networkOS (netmiko_arista_eos is eos, netmiko_ovs_linux is openvswitch-ssh, ...; see
	// docs/bmo-switch-data.md). Address, port, macAddress, networkOS and credentialsRef are then
	// left out here.
	// +optional
	BareMetalSwitchRef *LocalObjectReference `json:"bareMetalSwitchRef,omitempty"`

	// CredentialsRef names the Secret holding the credentials: kubernetes.io/basic-auth
	// (username, password), kubernetes.io/ssh-auth (ssh-privatekey, and a username key), or for
	// OVSDB over ssl kubernetes.io/tls (tls.crt, tls.key, ca.crt).
	// +optional
	CredentialsRef *SecretReference `json:"credentialsRef,omitempty"`

	// HostKey is the switch's SSH public key in authorized_keys form ("ssh-ed25519 AAAA...").
	// An SSH switch showing another key, or any key when none is pinned, is refused.
	// +kubebuilder:validation:MaxLength=16384
	// +optional
	HostKey string `json:"hostKey,omitempty"`

	// Bridge is the Open vSwitch bridge whose ports are managed (openvswitch drivers), or the
	// NVUE bridge domain (cumulus; default br_default).
	// +kubebuilder:validation:MaxLength=15
	// +optional
	Bridge string `json:"bridge,omitempty"`

	// OpenFlowRemote is the bridge's OpenFlow endpoint, as Open vSwitch writes remotes
	// ("tcp:192.0.2.10:6653" for a bridge told `ovs-vsctl set-controller BR ptcp:6653`, or
	// "unix:/var/run/openvswitch/BR.mgmt"), through which the openvswitch driver writes access
	// list flows and shuts ports. Unset: a switch reached over a unix OVSDB socket uses the
	// bridge's mgmt socket beside it; other switches cannot take acl or portStatus down.
	// openvswitch-ssh runs ovs-ofctl on the switch instead and needs none.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(tcp:.+:[0-9]{1,5}|unix:/.+)$`
	// +optional
	OpenFlowRemote string `json:"openFlowRemote,omitempty"`

	// MACAddress is the switch's management MAC address: the switch id that hosts' LLDP and
	// BareMetalHost spec.networkInterfaces[].switchPort.switchID name, by which metalwire makes
	// NIC objects for hosts. Hosts may also name the switch by its LLDP system name, which must
	// then equal name.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$`
	// +optional
	MACAddress string `json:"macAddress,omitempty"`

	// EquinixMetal is the project and metro of a switch of networkOS equinix-metal; its address
	// is the Metal API's ("https://api.equinix.com/metal/v1", overridable for tests) and its
	// credentialsRef an Opaque Secret whose key "token" holds the API token.
	// +optional
	EquinixMetal *EquinixMetalProject `json:"equinixMetal,omitempty"`

	// Aggregates is the range of aggregate interface (port-channel) numbers metalwire owns on
	// this switch: a host's bond becomes the aggregate numbered from the bond's name within the
	// range (the same on every pass), and an aggregate outside it is never touched. Switches
	// that number their aggregates and cannot label them (sonic: PortChannelN; openconfig: the
	// vendor's names) make bonds only with it. Keep the range free of aggregates of your own.
	// +optional
	Aggregates *AggregateRange `json:"aggregates,omitempty"`

	// IdleVLAN is the access VLAN a port goes back to when no cluster uses it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4094
	// +kubebuilder:default=1
	// +optional
	IdleVLAN int32 `json:"idleVLAN,omitempty"`

	// User is the seed's inline user name. It is refused: credentials go in a Secret.
	// +optional
	User string `json:"user,omitempty"`

	// Pwd is the seed's inline password. It is refused: credentials go in a Secret.
	// +optional
	Pwd string `json:"pwd,omitempty"`
}

// MLAGPair is two switches of a NetworkDevice that act as one for link aggregation.
//
// +kubebuilder:validation:XValidation:rule="self.switches[0] != self.switches[1]",message="an MLAG pair is two different switches; name the second switch of the pair",fieldPath=".switches"
// +kubebuilder:validation:XValidation:rule="!has(self.sonic) || self.switches.all(n, self.sonic.exists(e, e.switch == n))",message="mlagPairs[].sonic has one entry for each switch of the pair; name the pair's two switches",fieldPath=".sonic"
// +kubebuilder:validation:XValidation:rule="!has(self.sonic) || self.sonic[0].sourceAddress != self.sonic[1].sourceAddress",message="the two switches of a SONiC MCLAG pair have different sourceAddress values; give each switch its own",fieldPath=".sonic"
type MLAGPair struct {
	// Name of the pair, unique in the NetworkDevice.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Switches are the two switches of the pair, by their name in spec.switches.
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:MaxLength=253
	Switches []string `json:"switches"`
	// Domain is the pair's MLAG domain id (EOS domain-id, NX-OS vPC domain, Cumulus CLAG id,
	// SONiC MCLAG domain) as the switches know it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4095
	Domain int32 `json:"domain"`
	// SONiC is what SONiC's MCLAG needs of each switch of the pair, which the other OSes do
	// not ask: its source address and peer link (`config mclag add DOMAIN SOURCE PEER
	// PEERLINK`, the peer's address being the other entry's). Required when a switch of the
	// pair runs networkOS sonic; one entry per switch of the pair.
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=2
	// +listType=map
	// +listMapKey=switch
	// +optional
	SONiC []SONiCMCLAGSwitch `json:"sonic,omitempty"`
}

// SONiCMCLAGSwitch is one switch's side of a SONiC MCLAG domain.
type SONiCMCLAGSwitch struct {
	// Switch is the switch, by its name in spec.switches (one of the pair's switches).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Switch string `json:"switch"`
	// SourceAddress is the switch's IPv4 address the MCLAG session runs from (MCLAG_DOMAIN
	// source_ip; the peer's peer_ip). It must already be configured on the switch, reachable
	// from the peer (typically over the peer link's VLAN interface); metalwire does not set it.
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 4",message="must be an IPv4 address, such as 192.168.255.1 (SONiC's MCLAG session runs over IPv4)"
	SourceAddress string `json:"sourceAddress"`
	// PeerLink is the switch's interface to its peer (MCLAG_DOMAIN peer_link): an Ethernet port
	// or a port-channel the operator made (keep it outside spec.switches[].aggregates).
	// +kubebuilder:validation:Pattern=`^(Ethernet[0-9]{1,4}|PortChannel[0-9]{1,4})$`
	PeerLink string `json:"peerLink"`
}

// NetworkDeviceSpec lists the switches of one network.
//
// +kubebuilder:validation:XValidation:rule="!has(self.mlagPairs) || self.mlagPairs.all(p, p.switches.all(n, self.switches.exists(s, s.name == n)))",message="mlagPairs[].switches names a switch that is not in spec.switches; name switches of this NetworkDevice",fieldPath=".mlagPairs"
// +kubebuilder:validation:XValidation:rule="!has(self.mlagPairs) || self.mlagPairs.all(p, p.switches.all(n, self.mlagPairs.exists_one(q, n in q.switches)))",message="a switch is in two mlagPairs; a switch belongs to at most one pair",fieldPath=".mlagPairs"
// +kubebuilder:validation:XValidation:rule="!has(self.mlagPairs) || self.mlagPairs.all(p, has(p.sonic) || !self.switches.exists(s, has(s.networkOS) && s.networkOS == 'sonic' && s.name in p.switches))",message="an MLAG pair with a networkOS sonic switch needs mlagPairs[].sonic (each switch's sourceAddress and peerLink), without which SONiC's config mclag add cannot be made",fieldPath=".mlagPairs"
// +kubebuilder:validation:XValidation:rule="self.switches.all(s, self.switches.exists_one(t, t.name == s.name))",message="switch names must be unique within a NetworkDevice; rename the second switch of that name",fieldPath=".switches"
type NetworkDeviceSpec struct {
	// Switches are the switches hosts are cabled to. The seed's "switch".
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	Switches []Switch `json:"switches"`

	// MLAGPairs declares the pairs of switches that act as one for link aggregation
	// (multi-chassis LAG: EOS MLAG, NX-OS vPC, Cumulus CLAG, SONiC MCLAG). A host's bond whose
	// cards are cabled to two switches needs them declared a pair here, and switch OSes that
	// can do it; otherwise the host is refused (ClusterNetwork condition LinkAggregationValid).
	// +kubebuilder:validation:MaxItems=128
	// +listType=map
	// +listMapKey=name
	// +optional
	MLAGPairs []MLAGPair `json:"mlagPairs,omitempty"`

	// DriftPolicy says what happens to a port the controller configured that a read-back finds
	// changed at the switch: repair (the default) puts it back as it was set; report only
	// reports it (condition Drifted, an event, status.switches[].drifted, the drift metric) and
	// leaves it as found until its hosts' networks change.
	// +kubebuilder:validation:Enum=repair;report
	// +kubebuilder:default=repair
	// +optional
	DriftPolicy DriftPolicy `json:"driftPolicy,omitempty"`
}

// DriftPolicy is what the controller does with a port changed at the switch.
type DriftPolicy string

const (
	// DriftRepair puts a drifted port back as it was set.
	DriftRepair DriftPolicy = "repair"
	// DriftReport reports a drifted port and leaves it as found.
	DriftReport DriftPolicy = "report"
)

// DriftedPort is a configured port that the switch reported otherwise than it was set.
type DriftedPort struct {
	// Port is the port's name on the switch.
	Port string `json:"port"`
	// Set is what the controller set ("access vlan 1001").
	Set string `json:"set"`
	// Found is what the switch reported ("access vlan 7", or "not on the switch").
	Found string `json:"found"`
	// SeenAt is when the read-back found it.
	SeenAt metav1.Time `json:"seenAt"`
	// Repaired says the port was put back as it was set (driftPolicy repair).
	// +optional
	Repaired bool `json:"repaired,omitempty"`
}

// ConfiguredPort is a port the fabric controller configured, and how. Ports not listed here
// are never touched. The record is rewritten whole on every pass that changes it, so it leaves
// out every field at its default (mode access, a bond's mode lacp at rate slow, a list's default
// allow): at a thousand bonds that is a third less for the API server to take in per write.
type ConfiguredPort struct {
	// Name of the port on the switch.
	Name string `json:"name"`
	// Mode is access or trunk; unset: access.
	// +optional
	Mode PortMode `json:"mode,omitempty"`
	// VLAN is the access VLAN, or a trunk's native VLAN (0: none).
	// +optional
	VLAN int32 `json:"vlan,omitempty"`
	// Trunk lists the tagged VLANs of a trunk port.
	// +optional
	Trunk []int32 `json:"trunk,omitempty"`
	// MTU the controller set on the port (a HostNetworkAttachment's mtu); 0: the switch's own.
	// +optional
	MTU int32 `json:"mtu,omitempty"`
	// LAG is set when the port is a bond (link aggregation group) the controller made of
	// member ports; its name is the bond's.
	// +optional
	LAG *ConfiguredLAG `json:"lag,omitempty"`
	// Down is true when the controller shut the port (portStatus down).
	// +optional
	Down bool `json:"down,omitempty"`
	// ACLs is how managers before the per-switch record (status.switches[].acls) recorded the
	// access lists bound to the port. It is no longer written; a record that still has it is
	// read (its lists are found and removed as before) and rewritten without it on the next pass.
	// +optional
	ACLs []ConfiguredACL `json:"acls,omitempty"`
}

// PortMode is the port's mode, access when the record leaves it out.
func (p *ConfiguredPort) PortMode() PortMode { return cmp.Or(p.Mode, PortModeAccess) }

// ConfiguredACL is an access list the fabric controller bound to a port, as managers before the
// per-switch record (ConfiguredACLs) recorded it in status.switches[].ports[].acls.
type ConfiguredACL struct {
	// Name of the list on the switch.
	Name string `json:"name"`
	// VLAN is the trunk VLAN the list filters (0: the port's untagged traffic).
	// +optional
	VLAN int32 `json:"vlan,omitempty"`
	// Rules is how many rules the list has, before its default.
	Rules int32 `json:"rules"`
	// Default is allow or deny; unset: allow.
	// +optional
	Default ACLAction `json:"default,omitempty"`
}

// DefaultAction is the list's default, allow when the record leaves it out.
func (a *ConfiguredACL) DefaultAction() ACLAction { return cmp.Or(a.Default, ACLAllow) }

// ConfiguredACLs is access lists the fabric controller bound on a switch that hold the same:
// as many rules (before the default), the same default and the same VLAN. Every list is a
// host's on one network (its name is made from both, fabric.ACLName), bound to that host's
// port or bond on the switch (the NIC's status.nics[].acls names a card's lists), so a list
// is recorded once, by name, under what it holds: a thousand lists of one network's rules are
// one entry here.
type ConfiguredACLs struct {
	// Rules is how many rules each of the lists has, before its default.
	Rules int32 `json:"rules"`
	// Default is allow or deny; unset: allow.
	// +optional
	Default ACLAction `json:"default,omitempty"`
	// VLAN is the trunk VLAN the lists filter (0: their port's untagged traffic).
	// +optional
	VLAN int32 `json:"vlan,omitempty"`
	// Names of the lists, sorted.
	Names []string `json:"names"`
}

// DefaultAction is the lists' default, allow when the record leaves it out.
func (a *ConfiguredACLs) DefaultAction() ACLAction { return cmp.Or(a.Default, ACLAllow) }

// ConfiguredLAG is a bond the fabric controller made.
type ConfiguredLAG struct {
	// Members are the switch ports in the bond.
	Members []string `json:"members"`
	// Mode is lacp or static; unset: lacp.
	// +optional
	Mode LAGMode `json:"mode,omitempty"`
	// LACPRate is slow or fast (lacp only); unset: slow.
	// +optional
	LACPRate LACPRate `json:"lacpRate,omitempty"`
}

// LAGMode is the bond's mode, lacp when the record leaves it out.
func (l *ConfiguredLAG) LAGMode() LAGMode { return cmp.Or(l.Mode, LAGLACP) }

// Rate is the bond's LACP rate (slow when the record leaves it out); empty for a static bond.
func (l *ConfiguredLAG) Rate() LACPRate {
	if l.LAGMode() == LAGStatic {
		return ""
	}
	return cmp.Or(l.LACPRate, LACPSlow)
}

// SwitchStatus is what the controller last saw of one switch, and what it set there.
type SwitchStatus struct {
	// Name of the switch in spec.switches.
	Name string `json:"name"`
	// Reachable says whether the last attempt to manage the switch got through.
	Reachable bool `json:"reachable"`
	// LastError is the last error managing the switch, empty after a success.
	// +optional
	LastError string `json:"lastError,omitempty"`
	// Version is what the switch reports of its software.
	// +optional
	Version string `json:"version,omitempty"`
	// Ports the controller configured on this switch (its record: no other port is touched).
	// +listType=map
	// +listMapKey=name
	// +optional
	Ports []ConfiguredPort `json:"ports,omitempty"`
	// VLANs the controller created on this switch.
	// +optional
	VLANs []int32 `json:"vlans,omitempty"`
	// ACLs are the access lists the controller bound on this switch, grouped by what they hold
	// (rules, default, VLAN), each by name.
	// +optional
	ACLs []ConfiguredACLs `json:"acls,omitempty"`
	// ConfiguredWith is the switch's entry of spec.switches when the controller last configured
	// it. It is kept so that once the switch is removed from spec.switches the controller can
	// still reach it, reset the ports it configured there and remove its VLANs; the record goes
	// after that succeeds.
	// +optional
	ConfiguredWith *Switch `json:"configuredWith,omitempty"`
	// Removed says the switch is no longer in spec.switches: its ports are being reset before
	// the record goes.
	// +optional
	Removed bool `json:"removed,omitempty"`
	// Drifted lists the configured ports the last read-back found changed at the switch.
	// +listType=map
	// +listMapKey=port
	// +optional
	Drifted []DriftedPort `json:"drifted,omitempty"`
	// PlannedChanges is, while the NetworkDevice is in dry run (annotation
	// network.metalwire.io/dry-run: "true"), the batch this switch would get now, one change a
	// line, in the order it would be sent. Nothing was sent.
	// +optional
	PlannedChanges []string `json:"plannedChanges,omitempty"`
}

// BoundACLs is every access list the record says is bound on the switch, by name: the
// per-switch record's (acls) and, in a record written before it, the ports' (ports[].acls).
func (s *SwitchStatus) BoundACLs() map[string]ConfiguredACL {
	out := map[string]ConfiguredACL{}
	for _, set := range s.ACLs {
		for _, n := range set.Names {
			out[n] = ConfiguredACL{Name: n, VLAN: set.VLAN, Rules: set.Rules, Default: set.Default}
		}
	}
	for _, p := range s.Ports {
		for _, a := range p.ACLs {
			out[a.Name] = a
		}
	}
	return out
}

// NetworkDeviceStatus is the state of each switch.
type NetworkDeviceStatus struct {
	// Switches, in the order of spec.switches, then the switches removed from spec.switches
	// whose ports are still being reset (removed: true).
	// +optional
	Switches []SwitchStatus `json:"switches,omitempty"`

	// Conditions: Reachable (every switch answered), HostKeyTrusted (every SSH switch showed
	// its pinned key), Drifted (a configured port was found changed at the switch) and DryRun
	// (changes are planned, not sent).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NetworkDevice is a set of switches that hosts are cabled to, and how to manage them.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=networkdevices,scope=Namespaced,shortName=nd
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="OS",type="string",JSONPath=".spec.switches[*].networkOS",description="The switches' operating systems; simulated is dev mode's stand-in"
// +kubebuilder:printcolumn:name="Switches",type="integer",JSONPath=".spec.switches.length()",priority=1
// +kubebuilder:printcolumn:name="Reachable",type="string",JSONPath=".status.conditions[?(@.type==\"Reachable\")].status",description="Whether every switch answered"
// +kubebuilder:printcolumn:name="HostKeyTrusted",type="string",JSONPath=".status.conditions[?(@.type==\"HostKeyTrusted\")].status",description="Whether every SSH switch showed its pinned key"
// +kubebuilder:printcolumn:name="Drifted",type="string",JSONPath=".status.conditions[?(@.type==\"Drifted\")].status",description="Whether the last read-back found a configured port changed at the switch"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type NetworkDevice struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec   NetworkDeviceSpec   `json:"spec"`
	Status NetworkDeviceStatus `json:"status,omitempty"`
}

// NetworkDeviceList is a list of NetworkDevices.
//
// +kubebuilder:object:root=true
type NetworkDeviceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NetworkDevice `json:"items"`
}

// GetConditions returns the device's conditions.
func (d *NetworkDevice) GetConditions() []metav1.Condition { return d.Status.Conditions }

// SetConditions replaces the device's conditions.
func (d *NetworkDevice) SetConditions(c []metav1.Condition) { d.Status.Conditions = c }

// SwitchNamed returns the switch of that name, or nil.
func (d *NetworkDevice) SwitchNamed(name string) *Switch {
	for i := range d.Spec.Switches {
		if d.Spec.Switches[i].Name == name {
			return &d.Spec.Switches[i]
		}
	}
	return nil
}

// SONiCMCLAGOf is the pair switch sw is in when that pair declares SONiC MCLAG (mlagPairs[].sonic),
// with sw's entry and its peer's; all three nil when it is in no such pair.
func (d *NetworkDevice) SONiCMCLAGOf(sw string) (pair *MLAGPair, self, peer *SONiCMCLAGSwitch) {
	for i := range d.Spec.MLAGPairs {
		p := &d.Spec.MLAGPairs[i]
		if !slices.Contains(p.Switches, sw) {
			continue
		}
		for j := range p.SONiC {
			if p.SONiC[j].Switch == sw {
				self = &p.SONiC[j]
			} else {
				peer = &p.SONiC[j]
			}
		}
		if self != nil && peer != nil {
			return p, self, peer
		}
		return nil, nil, nil
	}
	return nil, nil, nil
}

func init() {
	objectTypes = append(objectTypes, &NetworkDevice{}, &NetworkDeviceList{})
}
