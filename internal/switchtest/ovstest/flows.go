package ovstest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// DumpedFlow is a flow as `ovs-ofctl --names --no-stats dump-flows` prints it.
type DumpedFlow struct {
	Cookie uint64
	// InPort is the port name the flow matches frames coming in on ("": any).
	InPort string
	// Match is the match as printed ("priority=30000,tcp,in_port=p0001,tp_dst=22").
	Match string
	// Actions as printed ("drop", "NORMAL").
	Actions string
}

// Field is the value of a match field ("tp_dst" of "tcp,tp_dst=22" is "22"); ok says whether the
// match has the field, valueless ones ("tcp") included.
func (f DumpedFlow) Field(name string) (value string, ok bool) {
	for _, part := range strings.Split(f.Match, ",") {
		k, v, _ := strings.Cut(part, "=")
		if k == name {
			return v, true
		}
	}
	return "", false
}

// DumpFlows reads the bridge's flows whose cookie is cookie under mask with ovs-ofctl through the
// bridge's management socket: what the switch holds, independent of the drivers under test.
func (s *Switch) DumpFlows(t testing.TB, bridge string, cookie, mask uint64) []DumpedFlow {
	t.Helper()
	out := s.Ofctl(t, "--names", "--no-stats", "dump-flows", s.MgmtRemote(bridge), fmt.Sprintf("cookie=%#x/%#x", cookie, mask))
	var flows []DumpedFlow
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "cookie=") {
			continue // the reply's header line
		}
		head, actions, ok := strings.Cut(line, " actions=")
		if !ok {
			t.Fatalf("ovs-ofctl dump-flows: no actions in %q", line)
		}
		fields := strings.Fields(head)
		c, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(fields[0], "cookie="), ","), 0, 64)
		if err != nil {
			t.Fatalf("ovs-ofctl dump-flows: cookie of %q: %v", line, err)
		}
		f := DumpedFlow{Cookie: c, Match: fields[len(fields)-1], Actions: actions}
		if p, ok := f.Field("in_port"); ok {
			f.InPort = strings.Trim(p, `"`)
		}
		flows = append(flows, f)
	}
	return flows
}
