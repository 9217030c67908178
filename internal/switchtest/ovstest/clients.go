package ovstest

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

var sessionsField = regexp.MustCompile(`\bsessions:(\d+)`)

// Clients is how many client connections ovsdb-server has open right now (its memory/show
// "sessions", absent when there are none).
func (s *Switch) Clients(t testing.TB) int {
	t.Helper()
	out := run(t, s.env(), "ovs-appctl", "-t", filepath.Join(s.Dir, "ovsdb-server.ctl"), "memory/show")
	m := sessionsField.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// DropClients makes ovsdb-server close every client connection, as a restart of the switch's
// database would.
func (s *Switch) DropClients(t testing.TB) {
	t.Helper()
	run(t, s.env(), "ovs-appctl", "-t", filepath.Join(s.Dir, "ovsdb-server.ctl"), "ovsdb-server/reconnect")
}

var ofconnsField = regexp.MustCompile(`\bofconns:(\d+)`)

// OpenFlowClients is how many OpenFlow connections ovs-vswitchd has open to its bridges right
// now (its memory/show "ofconns", absent when there are none).
func (s *Switch) OpenFlowClients(t testing.TB) int {
	t.Helper()
	out := run(t, s.env(), "ovs-appctl", "-t", filepath.Join(s.Dir, "ovs-vswitchd.ctl"), "memory/show")
	m := ofconnsField.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// DropOpenFlowClients makes ovs-vswitchd drop every OpenFlow connection to the bridge, as a
// restart of the switch would.
func (s *Switch) DropOpenFlowClients(t testing.TB, bridge string) {
	t.Helper()
	run(t, s.env(), "ovs-appctl", "-t", filepath.Join(s.Dir, "ovs-vswitchd.ctl"), "bridge/reconnect", bridge)
}
