package ipam

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// AllocationViewKeyAnnotation on an IPPool names its entry in the allocation view ConfigMap, in
// the seed's form "<metro>-<vlan>-<range>" ("ny-1000-10.60.10.0/24"). Pools without it are not
// in the view.
const AllocationViewKeyAnnotation = "network.metalwire.io/allocation-view-key"

// AllocationViewName is the ConfigMap the view is written to, as the seed names it.
const AllocationViewName = "capp-ip-allocations"

// Held is one address a pool handed out, and the claim holding it.
type Held struct {
	Pool, Claim, Address string
}

// ConfigMapKey is the ConfigMap key of a view key. The seed's keys ("da-1000-10.60.10.0/24")
// cannot be ConfigMap keys: the API server accepts only [-._a-zA-Z0-9], so the range's "/" is
// written "_" ("da-1000-10.60.10.0_24").
func ConfigMapKey(key string) string { return strings.ReplaceAll(key, "/", "_") }

var configMapKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// AllocationView is the seed's ConfigMap data: for each pool with a view key, a JSON object of
// claim name -> address (keys sorted, so equal claims give equal bytes), under ConfigMapKey of
// the view key. keys maps pool name -> view key; two pools with one key are refused, as the view
// could not tell them apart, and so is a key the ConfigMap cannot hold.
func AllocationView(keys map[string]string, allocs []Held) (map[string]string, error) {
	byKey := map[string]map[string]string{}
	owner := map[string]string{}
	for pool, key := range keys {
		key = ConfigMapKey(key)
		if !configMapKey.MatchString(key) {
			return nil, fmt.Errorf("IPPool %s: %s %q holds characters a ConfigMap key cannot; use letters, digits, '-', '.', '_' and '/'", pool, AllocationViewKeyAnnotation, keys[pool])
		}
		if other, dup := owner[key]; dup {
			a, b := other, pool
			if a > b {
				a, b = b, a
			}
			return nil, fmt.Errorf("IPPools %s and %s both carry %s %q; give each its own metro-vlan-range key", a, b, AllocationViewKeyAnnotation, key)
		}
		owner[key] = pool
		byKey[key] = map[string]string{}
	}
	for _, a := range allocs {
		if key, ok := keys[a.Pool]; ok {
			byKey[ConfigMapKey(key)][a.Claim] = a.Address
		}
	}
	out := make(map[string]string, len(byKey))
	for key, m := range byKey {
		b, err := json.MarshalIndent(m, "", "  ") // encoding/json sorts map keys
		if err != nil {
			return nil, err
		}
		out[key] = string(b)
	}
	return out, nil
}
