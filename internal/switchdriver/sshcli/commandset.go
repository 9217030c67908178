package sshcli

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Mode is how a CommandSet's lines reach the switch.
type Mode int

const (
	// ModeExec runs each line on its own exec channel of the session's one SSH connection.
	ModeExec Mode = iota
	// ModeShell types lines into one interactive shell and reads up to the prompt after each.
	ModeShell
	// ModePlatform types lines into the switch's CLI through scrapligo's network driver: the
	// platform definition gives the prompts, the privilege levels (exec, enable, configuration)
	// and the commands that turn paging off; the SSH connection under it is this package's.
	ModePlatform
)

// CommandSet describes one switch operating system's CLI.
type CommandSet struct {
	// NetworkOS is the NetworkDevice networkOS value ("openvswitch-ssh", "eos").
	NetworkOS string
	Mode      Mode
	// PortMTU says Render sets, and ParseState reads back, a port's MTU (fabric.Port.MTU).
	PortMTU bool
	// ACLs says Render binds access lists (ensure-acl, remove-acl) and ParseState reads them
	// back when asked by name; PortState that Render shuts and opens ports (Port.Down) and
	// ParseState reads their state back.
	ACLs, PortState bool
	// Setup lines are sent first in each shell session (e.g. "terminal length 0").
	Setup []string
	// ConfigEnter and ConfigExit surround the rendered lines of a batch (shell mode; in platform
	// mode the privilege levels of the platform definition do this). Save follows them when a
	// batch changed something (e.g. "copy running-config startup-config"; exec mode: after the
	// lines; platform mode: at the default privilege level).
	ConfigEnter, ConfigExit, Save []string
	// Platform is the scrapligo platform definition of ModePlatform: the name of one scrapligo
	// ships ("arista_eos", "cisco_nxos", "juniper_junos"), or PlatformDefinition, a YAML
	// definition of the same form, for an OS scrapligo has none for.
	Platform           string
	PlatformDefinition []byte
	// ConfigPrivilege is the platform's privilege level the batch's lines are typed at
	// ("configuration" when empty; Junos: "configuration-private", a candidate of the session's
	// own that the switch drops if the session ends before the commit).
	ConfigPrivilege string
	// Commit lines follow a batch's lines at the configuration privilege level (platform mode):
	// Junos' "commit check" and "commit". Rollback lines are sent there instead when a line of
	// the batch failed, so a candidate configuration is left as it was ("rollback 0").
	Commit, Rollback []string
	// Prompt matches the end of the output once the switch is ready for the next line (shell
	// mode), e.g. `[\w.\-@()/: ]+[#>$] ?$`.
	Prompt *regexp.Regexp
	// Errors match output lines that mean the command failed, e.g. `^% Invalid`, `^ovs-vsctl: `.
	Errors []*regexp.Regexp
	// Render turns the changes of a batch (already checked, already filtered to those the switch
	// does not match) into CLI lines. have is what the switch showed just before (the zero State
	// when the OS cannot be read back): CLIs that add to a list rather than replace it (SONiC's
	// VLAN members, OS10's allowed VLANs) take away what have shows and the change does not keep.
	// It returns an error wrapping fabric.ErrUnsupported for an operation the OS cannot do.
	Render func(ep fabric.Endpoint, have fabric.State, batch fabric.Batch) ([]string, error)
	// ReadCommands are the lines whose outputs ParseState reads; nil when the OS cannot be read
	// back (then every change is sent as given and ports are not checked before sending).
	ReadCommands func(ep fabric.Endpoint, ports []string) []string
	// ParseState reads the outputs of ReadCommands: the switch's VLANs and the named ports that
	// exist.
	ParseState func(ep fabric.Endpoint, ports []string, outputs []string) (fabric.State, error)
	// VersionCommand's output is turned into fabric.Info.Version by ParseVersion.
	VersionCommand string
	ParseVersion   func(output string) string
}

// Validate reports a CommandSet that cannot work, for the package that defines one.
func (cs CommandSet) Validate() error {
	switch {
	case cs.NetworkOS == "":
		return fmt.Errorf("command set: NetworkOS is empty")
	case cs.Render == nil:
		return fmt.Errorf("command set %s: Render is nil", cs.NetworkOS)
	case cs.Mode == ModeShell && cs.Prompt == nil:
		return fmt.Errorf("command set %s: shell mode needs a Prompt", cs.NetworkOS)
	case cs.Mode == ModePlatform && cs.Platform == "" && len(cs.PlatformDefinition) == 0:
		return fmt.Errorf("command set %s: platform mode needs a Platform or PlatformDefinition", cs.NetworkOS)
	case (cs.ReadCommands == nil) != (cs.ParseState == nil):
		return fmt.Errorf("command set %s: ReadCommands and ParseState go together", cs.NetworkOS)
	}
	return nil
}

// safeName matches the port and LAG names a CLI line may carry: every vendor's interface names
// fit, and nothing a shell or a CLI parser would read as syntax does.
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9/_.:\-]{0,63}$`)

// checkChange refuses values no switch accepts before anything is sent. Names are checked
// against safeName because they are written into command lines.
func checkChange(i int, c fabric.Change) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("change %d (%s): %s", i, c, fmt.Sprintf(format, a...))
	}
	vlanOK := func(v int) bool { return v >= 1 && v <= 4094 }
	switch c.Op {
	case fabric.OpEnsureVLAN, fabric.OpRemoveVLAN:
		if !vlanOK(c.VLAN.ID) {
			return bad("VLAN %d is outside 1-4094", c.VLAN.ID)
		}
	case fabric.OpAccessPort, fabric.OpTrunkPort, fabric.OpResetPort:
		if !safeName.MatchString(c.Port.Name) {
			return bad("port name %q is not a switch interface name (letters, digits, / _ . : -)", c.Port.Name)
		}
		if c.Op == fabric.OpAccessPort && !vlanOK(c.Port.VLAN) {
			return bad("access VLAN %d is outside 1-4094", c.Port.VLAN)
		}
		if c.Port.VLAN != 0 && !vlanOK(c.Port.VLAN) {
			return bad("VLAN %d is outside 1-4094", c.Port.VLAN)
		}
		if c.Op == fabric.OpTrunkPort && len(c.Port.Trunk) == 0 {
			return bad("a trunk needs at least one VLAN")
		}
		for _, v := range c.Port.Trunk {
			if !vlanOK(v) {
				return bad("trunk VLAN %d is outside 1-4094", v)
			}
		}
	case fabric.OpEnsureLAG, fabric.OpRemoveLAG:
		for _, n := range append([]string{c.LAG.Name}, c.LAG.Members...) {
			if !safeName.MatchString(n) {
				return bad("name %q is not a switch interface name", n)
			}
		}
	case fabric.OpEnsureACL, fabric.OpRemoveACL:
		// A list read back from flows (Open vSwitch) has no port: removing it needs none.
		if !safeName.MatchString(c.ACL.Name) || ((c.Op == fabric.OpEnsureACL || c.ACL.Port != "") && !safeName.MatchString(c.ACL.Port)) {
			return bad("ACL name %q or port %q is not a switch name", c.ACL.Name, c.ACL.Port)
		}
		for _, m := range c.ACL.Members {
			if !safeName.MatchString(m) {
				return bad("bond member %q is not a switch interface name", m)
			}
		}
	default:
		return bad("unknown operation %q", c.Op)
	}
	return nil
}

// portsOf lists the ports a batch configures, in order, once each.
func portsOf(batch fabric.Batch) []string {
	var out []string
	for _, c := range batch {
		switch c.Op {
		case fabric.OpAccessPort, fabric.OpTrunkPort, fabric.OpResetPort:
			if !slices.Contains(out, c.Port.Name) {
				out = append(out, c.Port.Name)
			}
		}
	}
	return out
}

// aclsOf lists the access lists a batch binds or removes, and the ports or bonds they are bound
// to, in order, once each: read with the ports, so a list already as asked (or already gone) is
// not sent again, and a bond's list finds the bond's interface.
func aclsOf(batch fabric.Batch) []string {
	var out []string
	for _, c := range batch {
		if c.Op != fabric.OpEnsureACL && c.Op != fabric.OpRemoveACL {
			continue
		}
		for _, n := range []string{c.ACL.Name, c.ACL.Port} {
			if n != "" && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// lagsOf lists the bonds a batch makes or removes, in order, once each: read with the ports, so
// a bond already as asked (or already gone) is not sent again.
func lagsOf(batch fabric.Batch) []string {
	var out []string
	for _, c := range batch {
		if (c.Op == fabric.OpEnsureLAG || c.Op == fabric.OpRemoveLAG) && !slices.Contains(out, c.LAG.Name) {
			out = append(out, c.LAG.Name)
		}
	}
	return out
}
