package osnetconfig

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// macPattern is os-net-config's test for a mapping value that names a NIC by its MAC rather
// than its kernel name (the schema's mac_address_string).
var macPattern = regexp.MustCompile(`^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$`)

// ValidateMapping checks an os-net-config mapping file (os-net-config --mapping, by default
// /etc/os-net-config/mapping.yaml):
//
//	interface_mapping:
//	  nic1: 52:54:00:aa:bb:01   # a MAC
//	  nic2: eno2                # or a kernel name
//
// os-net-config refuses a file that maps one device twice ("interface X already mapped, check
// mapping file for duplicates"); MACs are compared as os-net-config compares them, without
// regard to case or to ':' versus '-'.
func ValidateMapping(doc []byte) error {
	var file map[string]any
	if err := yaml.Unmarshal(doc, &file); err != nil {
		return fmt.Errorf("os-net-config mapping is not YAML: %s", strings.TrimPrefix(err.Error(), "error converting YAML to JSON: "))
	}
	raw, ok := file["interface_mapping"]
	if !ok {
		return fmt.Errorf("os-net-config mapping has no interface_mapping; write interface_mapping: {alias: MAC or device name}")
	}
	for k := range file {
		if k != "interface_mapping" {
			return fmt.Errorf("os-net-config mapping: top-level key %q is not read by os-net-config; put every alias under interface_mapping", k)
		}
	}
	entries, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("os-net-config mapping: interface_mapping is not a mapping (%v); write interface_mapping: {alias: MAC or device name}", raw)
	}
	mapping := make(map[string]string, len(entries))
	for alias, v := range entries {
		s, isString := v.(string)
		if !isString {
			return fmt.Errorf("os-net-config mapping: interface_mapping.%s is %v (%T); give a MAC (52:54:00:aa:bb:01) or a device name (eno1)", alias, v, v)
		}
		mapping[alias] = s
	}
	return CheckMapping(mapping)
}

// CheckMapping applies os-net-config's rules to an interface mapping (alias to MAC or device
// name): no empty alias or value, and no device mapped twice.
func CheckMapping(mapping map[string]string) error {
	aliases := make([]string, 0, len(mapping))
	for a := range mapping {
		aliases = append(aliases, a)
	}
	slices.Sort(aliases)
	byDevice := map[string]string{}
	for _, alias := range aliases {
		v := strings.TrimSpace(mapping[alias])
		if alias == "" {
			return fmt.Errorf("os-net-config mapping: an alias is empty; name it (nic1, em0, ...)")
		}
		if v == "" {
			return fmt.Errorf("os-net-config mapping: interface_mapping.%s is empty; give a MAC (52:54:00:aa:bb:01) or a device name (eno1)", alias)
		}
		key := v
		if macPattern.MatchString(v) {
			key = NormalizeMAC(v)
		}
		if first, dup := byDevice[key]; dup {
			return fmt.Errorf("os-net-config mapping: %s is mapped by both %s and %s; os-net-config refuses a device mapped twice (\"already mapped, check mapping file for duplicates\"): map it once", v, first, alias)
		}
		byDevice[key] = alias
	}
	return nil
}

// NormalizeMAC writes a MAC as os-net-config compares it: lower case, ':' separated.
func NormalizeMAC(mac string) string {
	return strings.ToLower(strings.ReplaceAll(mac, "-", ":"))
}
