package ipam_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/metalwire/metalwire/pkg/ipam"
)

// An IPPool controller parses the pool once per edit, rebuilds the index from the IPAddresses in
// its cache, then allocates for each pending claim.
func Example() {
	pool, err := ipam.Parse(ipam.Spec{
		Prefix:            24,
		Gateway:           "192.168.0.1",
		ExcludedAddresses: []string{"192.168.0.2-192.168.0.9"},
		PreAllocations:    map[string]string{"host-0-pool": "192.168.0.100"},
		Pools:             []ipam.Range{{Start: "192.168.0.1", End: "192.168.0.12"}, {Start: "192.168.0.100", End: "192.168.0.101"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	idx, _ := ipam.Rebuild(pool, []ipam.Allocation{{Owner: "host-9-pool", Addr: pool.Entries[0].Last}}, nil)

	for _, claim := range []string{"host-1-pool", "host-0-pool", "host-2-pool", "host-3-pool", "host-4-pool"} {
		addr, err := idx.Allocate(claim, now)
		if errors.Is(err, ipam.ErrPoolExhausted) {
			fmt.Printf("%s: %v\n", claim, err)
			continue
		}
		entry, _ := pool.Entry(addr)
		fmt.Printf("%s: %s/%d via %s\n", claim, addr, entry.Prefix, entry.Gateway)
	}
	st := idx.Stats(now)
	fmt.Printf("total %s, used %d, free %s\n", st.Total, st.Used, st.Free)
	// Output:
	// host-1-pool: 192.168.0.10/24 via 192.168.0.1
	// host-0-pool: 192.168.0.100/24 via 192.168.0.1
	// host-2-pool: 192.168.0.11/24 via 192.168.0.1
	// host-3-pool: 192.168.0.101/24 via 192.168.0.1
	// host-4-pool: pool has 5 addresses, all in use: add a range to spec.pools or release addresses
	// total 5, used 5, free 0
}
