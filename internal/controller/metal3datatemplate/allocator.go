package metal3datatemplate

import (
	"cmp"
	"slices"
	"time"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// holder is a Metal3Data of the template as the allocator sees it: the index its name holds
// and the claim it serves.
type holder struct {
	Index int32
	Claim string
}

// waiting is a claim that has no Metal3Data yet.
type waiting struct {
	Name    string
	Created time.Time
}

// used returns the set of indexes taken by the template's Metal3Data. A Metal3Data whose name
// is not <template>-<index> takes none: only the name is a lock.
func used(template string, dataNames []string) map[int32]bool {
	taken := make(map[int32]bool, len(dataNames))
	for _, name := range dataNames {
		if index, ok := infrav1.DataIndexFromName(template, name); ok {
			taken[index] = true
		}
	}
	return taken
}

// assign gives each waiting claim the lowest index not taken, oldest claim first (ties by
// name), so that the outcome does not depend on the order the cache lists claims in. Gaps left
// by deleted claims are filled before the highest index grows.
func assign(claims []waiting, taken map[int32]bool) map[string]int32 {
	ordered := slices.Clone(claims)
	slices.SortFunc(ordered, func(a, b waiting) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	out := make(map[string]int32, len(ordered))
	next := int32(0)
	for _, c := range ordered {
		next = lowestFree(taken, next)
		out[c.Name] = next
		next++
	}
	return out
}

// lowestFree is the lowest index at or above from that is not taken.
func lowestFree(taken map[int32]bool, from int32) int32 {
	for taken[from] {
		from++
	}
	return from
}

// statusIndexes is the template's status.indexes: one entry per claim holding an index,
// ordered by index so that the list reads like the Metal3Data names.
func statusIndexes(holders []holder) []infrav1.IndexEntry {
	out := make([]infrav1.IndexEntry, 0, len(holders))
	for _, h := range holders {
		out = append(out, infrav1.IndexEntry{Name: h.Claim, Index: h.Index})
	}
	slices.SortFunc(out, func(a, b infrav1.IndexEntry) int {
		return cmp.Or(cmp.Compare(a.Index, b.Index), cmp.Compare(a.Name, b.Name))
	})
	// The status list is keyed by index; one name per index is what the API server allows.
	return slices.CompactFunc(out, func(a, b infrav1.IndexEntry) bool { return a.Index == b.Index })
}
