package clusternetwork

import (
	"fmt"
	"testing"
)

// A condition message names the first 20 hosts and counts the rest.
func TestHostList(t *testing.T) {
	hosts := make([]string, 25)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("h%02d", i)
	}
	if got := hostList(hosts[:3], ", "); got != "h00, h01, h02" {
		t.Fatalf("three hosts read %q", got)
	}
	want := "h00, h01, h02, h03, h04, h05, h06, h07, h08, h09, h10, h11, h12, h13, h14, h15, h16, h17, h18, h19, and 5 more (see status.states)"
	if got := hostList(hosts, ", "); got != want {
		t.Fatalf("25 hosts read %q, want %q", got, want)
	}
}
