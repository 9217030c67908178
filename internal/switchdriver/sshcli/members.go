package sshcli

import (
	"slices"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// membersOf lists the member ports of the bonds a batch makes or removes, in order, once each:
// read with the ports, so a renderer sees what a port carries before it joins a bond or after it
// leaves one (SONiC refuses a port-channel member that is still in a VLAN).
func membersOf(batch fabric.Batch) []string {
	var out []string
	for _, c := range batch {
		if c.Op != fabric.OpEnsureLAG && c.Op != fabric.OpRemoveLAG {
			continue
		}
		for _, m := range c.LAG.Members {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}
