package fabric

import (
	"context"
	"errors"
	"fmt"
)

// PortMode says how a switch port carries VLANs.
type PortMode string

const (
	// ModeAccess carries one VLAN, untagged.
	ModeAccess PortMode = "access"
	// ModeTrunk carries a list of VLANs, tagged, and optionally one native (untagged) VLAN.
	ModeTrunk PortMode = "trunk"
)

// Port is the managed configuration of one switch port.
type Port struct {
	// Name is the port as the switch names it ("eth1", "Ethernet1/1", an OVS port name).
	Name string
	// Mode is access or trunk.
	Mode PortMode
	// VLAN is the access VLAN (ModeAccess), or the native VLAN of a trunk (0: none).
	VLAN int
	// Trunk lists the tagged VLANs of a trunk port, ascending, without duplicates.
	Trunk []int
	// MTU is the port's MTU as metalwire set it (0: not set by metalwire, the switch's own).
	// Only drivers that are PortMTUSetters read or set it.
	MTU int
	// Down is the port's administrative state: true when metalwire shut it (a network's
	// portStatus: down). Only drivers that are PortStateSetters read or set it; a reset port is up.
	Down bool
}

// PortStateSetter is a driver that sets and reads back a port's administrative state
// (Port.Down). The controller offers no host whose network asks for portStatus down on a switch
// whose driver is not one.
type PortStateSetter interface {
	SetsPortState() bool
}

// ACLSetter is a driver that binds access lists to ports (OpEnsureACL, OpRemoveACL) and reads
// them back (State.ACLs). The controller offers no host whose network has an acl on a switch
// whose driver is not one.
type ACLSetter interface {
	SetsACLs() bool
}

// PortMTUSetter is a driver that sets and reads back a port's MTU (Port.MTU). Other drivers
// never see a Port with an MTU: the controller says it was not applied.
type PortMTUSetter interface {
	SetsPortMTU() bool
}

// VLAN is a VLAN defined on a switch.
type VLAN struct {
	ID int
	// Name is a label for switches that name VLANs; drivers that do not may ignore it.
	Name string
}

// State is what a switch reports (or should report) for the ports and VLANs metalwire manages.
type State struct {
	// VLANs defined on the switch, ascending by ID. Switches whose VLANs exist only as port
	// tags (Open vSwitch) report the VLANs their ports carry.
	VLANs []VLAN
	// Ports by name. Read returns only the ports it was asked about that exist.
	Ports map[string]Port
	// LAGs by name: the bonds. Read returns those it was asked about (by the LAG's name) that
	// exist; their members are not in Ports.
	LAGs map[string]LAG
	// ACLs by name: the access lists metalwire bound to ports. Read (of an ACLSetter) returns
	// those it was asked about (by the ACL's name) that exist, as rules or, where the switch
	// keeps flows rather than lists (Open vSwitch), as the flows found under the ACL's cookie.
	ACLs map[string]ACL
}

// Op names one kind of change in a Batch.
type Op string

// The changes a driver applies. LAG and ACL ops are part of the contract so that drivers of part 2
// (vendor switches, SmartNICs) fit without changing it; a driver that cannot do one returns an
// error wrapping ErrUnsupported from Apply, before changing anything.
const (
	OpEnsureVLAN Op = "ensure-vlan" // VLAN present on the switch
	OpRemoveVLAN Op = "remove-vlan" // VLAN gone from the switch
	OpAccessPort Op = "access-port" // Port: access in Port.VLAN
	OpTrunkPort  Op = "trunk-port"  // Port: trunk of Port.Trunk, native Port.VLAN
	OpResetPort  Op = "reset-port"  // Port back to the idle VLAN (Port.VLAN), as the controller found it
	OpEnsureLAG  Op = "ensure-lag"  // LAG: bond of member ports
	OpRemoveLAG  Op = "remove-lag"
	OpEnsureACL  Op = "ensure-acl" // ACL: the whole list, bound to its port, replacing what the list had
	OpRemoveACL  Op = "remove-acl" // ACL: the list unbound and gone (its flows, on Open vSwitch)
)

// LAG is a link aggregation group (bond) of switch ports.
type LAG struct {
	Name    string
	Members []string
	// LACP is true for an LACP (802.3ad) bond, false for a static one (Open vSwitch:
	// active-backup, no LACP).
	LACP bool
	// FastRate asks LACP partners for a frame a second rather than every 30 seconds.
	FastRate bool
	// Port is the VLAN configuration of the bond, as of a port of the LAG's name. For
	// remove-lag it is the idle port each member goes back to.
	Port Port
	// MLAG is set when the bond's other members are on the pair's other switch.
	MLAG *MLAG
}

// ACLRule is one rule of an access list bound to a port.
type ACLRule struct {
	Direction string // ingress or egress
	Protocol  string // all, icmp, ssh, http, https, tcp:N, udp:N, tcp:N-M, udp:N-M
	Action    string // allow or deny
	// Remote is the CIDR of the other end (ingress: the destination; egress: the source); ""
	// for any.
	Remote string
}

// ACL is an access list bound to a port (or bond) for one host's network: its rules in order,
// then the default.
type ACL struct {
	// Name is the list's name on the switch (ACLName of the host and network).
	Name string
	// Cookie marks the list's OpenFlow flows (ACLCookie of the host and network).
	Cookie uint64
	// Port is the port, or the bond (a LAG's name), the list is bound to; Members are the bond's
	// member ports (empty for a port).
	Port    string
	Members []string
	// VLAN is the network's VLAN when the port carries it tagged (a trunk): the rules match
	// only that VLAN's frames. 0: the port's untagged frames (an access port).
	VLAN int
	// HostMACs are the MACs of the host's cards behind the port: egress rules match frames sent
	// to them. A switch whose lists do not use them (IP access lists) may read back none;
	// SameACL then does not compare them.
	HostMACs []string
	Rules    []ACLRule
	// DefaultDeny drops what no rule matched (aclDefault: deny); otherwise it passes.
	DefaultDeny bool
	// Flows is the list as read back from a switch that keeps flows (Open vSwitch), set by Read
	// only; rules are not recovered from flows. SameACL compares them with the wanted list's.
	Flows []Flow
	// Entries are the switch's own keys of what the list is made of, as read back, on a switch
	// whose store cannot drop a list by its name alone (SONiC's CONFIG_DB: its ACL_TABLE and
	// ACL_RULE keys), so that rewriting or removing the list deletes exactly them, rules added
	// by hand included. Set by Read only; SameACL does not compare them.
	Entries []string
}

// Change is one step of a Batch. Exactly the field its Op needs is set.
type Change struct {
	Op   Op
	VLAN VLAN // ensure-vlan, remove-vlan
	Port Port // access-port, trunk-port, reset-port
	LAG  LAG  // ensure-lag, remove-lag
	ACL  ACL  // ensure-acl, remove-acl
}

// String reads as a line of a change log: "access-port eth1 vlan 1001".
func (c Change) String() string {
	switch c.Op {
	case OpEnsureVLAN, OpRemoveVLAN:
		return fmt.Sprintf("%s %d", c.Op, c.VLAN.ID)
	case OpAccessPort, OpResetPort:
		return fmt.Sprintf("%s %s vlan %d%s", c.Op, c.Port.Name, c.Port.VLAN, downWord(c.Port))
	case OpTrunkPort:
		return fmt.Sprintf("%s %s vlans %v native %d%s", c.Op, c.Port.Name, c.Port.Trunk, c.Port.VLAN, downWord(c.Port))
	case OpEnsureLAG:
		return fmt.Sprintf("%s %s %s", c.Op, c.LAG.Name, c.LAG.Describe())
	case OpRemoveLAG:
		return fmt.Sprintf("%s %s %v to vlan %d", c.Op, c.LAG.Name, sortedNames(c.LAG.Members), c.LAG.Port.VLAN)
	case OpEnsureACL:
		return fmt.Sprintf("%s %s on %s %s", c.Op, c.ACL.Name, c.ACL.Port, c.ACL.Describe())
	case OpRemoveACL:
		return fmt.Sprintf("%s %s on %s", c.Op, c.ACL.Name, c.ACL.Port)
	}
	return string(c.Op)
}

func downWord(p Port) string {
	if p.Down {
		return " down"
	}
	return ""
}

// Batch is the changes to one switch, applied in one session (one SSH login, one OVSDB
// transaction), in order: VLANs are ensured before ports use them and removed after ports leave.
type Batch []Change

// ErrUnsupported is wrapped by a driver's error for an Op its switch cannot do.
var ErrUnsupported = errors.New("not supported by this switch driver")

// Credentials are read from the Secret a NetworkDevice's switch names; never from the object.
type Credentials struct {
	Username string
	Password string
	// PrivateKey is a PEM private key (kubernetes.io/ssh-auth's ssh-privatekey).
	PrivateKey []byte
	// TLS client certificate, key and CA (kubernetes.io/tls: tls.crt, tls.key, ca.crt) for
	// OVSDB over ssl.
	CertPEM, KeyPEM, CAPEM []byte
	// Token is an API token (an Opaque Secret's "token") for cloud APIs (equinix-metal). It is
	// sent only to the API and never written to a log, an error or a condition.
	Token string
}

// Endpoint is how to reach one switch's management interface.
type Endpoint struct {
	// Switch is the name in the NetworkDevice, for messages.
	Switch string
	// Address is an IP address or DNS name; for OVSDB it may also be a full remote
	// ("tcp:127.0.0.1:6640", "ssl:...", "unix:/run/openvswitch/db.sock").
	Address string
	Port    int
	// HostKey is the pinned SSH public key in authorized_keys form. An SSH driver refuses a
	// switch that shows another key (HostKeyError).
	HostKey     string
	Credentials Credentials
	// Bridge is the Open vSwitch bridge whose ports are managed (OVS drivers); others ignore it.
	Bridge string
	// OpenFlowRemote is the bridge's OpenFlow endpoint ("tcp:HOST:PORT", "unix:PATH") through
	// which the openvswitch driver writes ACL flows and port state; "" for none given.
	OpenFlowRemote string
	// Project and Metro are the cloud project and metro whose devices' ports and VLANs are
	// managed (equinix-metal); others ignore them.
	Project, Metro string
	// Aggregates is the range of aggregate numbers metalwire owns (spec.switches[].aggregates,
	// its prefix defaulted per OS); nil when none was declared. The drivers that number bonds
	// from it (sonic, openconfig) refuse a bond without it.
	Aggregates *Aggregates
	// MCLAG is the switch's side of its pair's SONiC MCLAG domain (mlagPairs[].sonic); nil when
	// the switch is in no pair that declares one. The sonic driver refuses an MLAG half without it.
	MCLAG *MCLAGDomain
	// IdleVLAN is the VLAN a reset port goes back to; a driver whose idle state is no VLAN at
	// all (equinix-metal: layer3) reports an idle port in it so the read-back matches a reset.
	IdleVLAN int
}

// HostKeyError says an SSH switch showed a key other than the pinned one (or none was pinned).
// The controller shows Fingerprint in the NetworkDevice's HostKeyTrusted condition.
type HostKeyError struct {
	Switch      string
	Fingerprint string // SHA256:... of the key the switch showed
	Pinned      bool   // false: no key was pinned
}

func (e *HostKeyError) Error() string {
	if !e.Pinned {
		return fmt.Sprintf("switch %s: no SSH host key is pinned; the switch shows %s: set hostKey to trust it", e.Switch, e.Fingerprint)
	}
	return fmt.Sprintf("switch %s: SSH host key %s does not match the pinned hostKey; refusing to connect", e.Switch, e.Fingerprint)
}

// Session is an open management connection to one switch.
type Session interface {
	// Info reads what the switch says of itself (for status.switches[].version).
	Info(ctx context.Context) (Info, error)
	// Read returns the VLANs and the named ports' configuration as the switch reports them.
	Read(ctx context.Context, ports []string) (State, error)
	// Apply applies the batch at once: one transaction where the protocol has them, one
	// session otherwise. A driver checks every change it can before sending any.
	Apply(ctx context.Context, batch Batch) error
	// Close ends the session.
	Close() error
}

// HostReporter is a session whose "switch" also hears from the hosts: a cloud API to which each
// host's OS reports whether it configured its side of the network (equinix-metal: the device's
// events, where the VLAN user-data's user-state posts land). The networkdevice controller asks
// it about the hosts behind the ports it configured, until each has a final answer.
type HostReporter interface {
	// HostReports reads the latest report of the host behind each port (ports as the driver
	// names them), keyed by port. A port whose host said nothing yet is absent.
	HostReports(ctx context.Context, ports []string) (map[string]HostReport, error)
}

// HostReport is what a host last said of its network configuration.
type HostReport struct {
	// Host is the host behind the port, as the driver names it (equinix-metal: the device id).
	Host string
	// Final: the host succeeded or failed; nothing more is to come.
	Final bool
	// Failed: the host's configuration failed (with Final).
	Failed bool
	// Message is the host's own words, as the API gives them.
	Message string
}

// Info is what a switch reports of itself.
type Info struct {
	Version string
}

// Driver opens sessions to switches of one operating system. Everything a session needs is in
// the Endpoint; a driver remembers nothing of what a switch carries between sessions (it may
// keep connections open).
type Driver interface {
	// NetworkOS is the NetworkDevice networkOS value this driver serves ("openvswitch").
	NetworkOS() string
	// DefaultPort is the management port used when a switch gives none (22, 6640).
	DefaultPort() int
	// Connect opens a session. Errors say what failed: unreachable, refused credentials, or a
	// *HostKeyError.
	Connect(ctx context.Context, ep Endpoint) (Session, error)
}

// AdminState is the administrative state a batch asks of one interface: a port's, or, with
// Bond set, a member's of that bond (a bond is shut by shutting its members where the switch
// has no bond interface of its own, as on Open vSwitch).
type AdminState struct {
	Name string
	Down bool
	Bond string
}

// AdminStates lists the state each interface a batch touches is asked to have, in the order the
// batch first names it, the last change of an interface winning: a port change asks Port.Down, a
// reset up, a bond its Port.Down of every member, a bond removed up of every member.
func AdminStates(batch Batch) []AdminState {
	var out []AdminState
	set := func(name string, down bool, bond string) {
		for i := range out {
			if out[i].Name == name {
				out[i].Down, out[i].Bond = down, bond
				return
			}
		}
		out = append(out, AdminState{Name: name, Down: down, Bond: bond})
	}
	for _, c := range batch {
		switch c.Op {
		case OpAccessPort, OpTrunkPort:
			set(c.Port.Name, c.Port.Down, "")
		case OpResetPort:
			set(c.Port.Name, false, "")
		case OpEnsureLAG:
			for _, m := range c.LAG.Members {
				set(m, c.LAG.Port.Down, c.LAG.Name)
			}
		case OpRemoveLAG:
			for _, m := range c.LAG.Members {
				set(m, false, c.LAG.Name)
			}
		}
	}
	return out
}
