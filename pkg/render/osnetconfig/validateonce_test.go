package osnetconfig_test

import (
	_ "embed"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
	"github.com/metalwire/metalwire/pkg/render/yamlout"
)

//go:embed schema.yaml
var schemaYAML []byte

// hostConfig is one host's rendered os-net-config list: the same shape for every host, its own
// addresses. The values are JSON-shaped, as ConfigFile hands them to the check.
func hostConfig(t *testing.T, addr4, addr6, gateway, dns string) []any {
	t.Helper()
	doc := fmt.Sprintf(`
- type: linux_bond
  name: bond0
  bonding_options: "mode=802.3ad miimon=100"
  members: [{type: interface, name: nic1, primary: true}, {type: interface, name: nic2}]
  use_dhcp: false
- type: vlan
  device: bond0
  vlan_id: 100
  mtu: 9000
  addresses: [{ip_netmask: %q}, {ip_netmask: %q}]
  routes: [{default: true, next_hop: %q}, {ip_netmask: 10.0.0.0/8, next_hop: %q}]
  dns_servers: [%q, 8.8.8.8]
`, addr4, addr6, gateway, gateway, dns)
	var list []any
	if err := yaml.Unmarshal([]byte(doc), &list); err != nil {
		t.Fatal(err)
	}
	tree, err := yamlout.Value(list)
	if err != nil {
		t.Fatal(err)
	}
	return tree.([]any)
}

// TestConfigFileChecksEachHostsAddressesAndTheShapeOnce: the hosts of a template share one
// shape, checked against the whole schema once; every host's addresses are still checked, and a
// refused host gets the problems (and words) the whole schema gives.
func TestConfigFileChecksEachHostsAddressesAndTheShapeOnce(t *testing.T) {
	g := NewWithT(t)
	var whole atomic.Int32
	defer osnetconfig.OnShapeCheck(func() { whole.Add(1) })()

	for i := range 50 {
		list := hostConfig(t, fmt.Sprintf("10.1.%d.%d/24", i/250, i%250+1), fmt.Sprintf("fd00::%x/64", i+1), "10.1.0.254", "10.1.0.53")
		doc, err := osnetconfig.ConfigFile(list)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(doc)).To(ContainSubstring(fmt.Sprintf("ip_netmask: 10.1.%d.%d/24", i/250, i%250+1)), "the file holds the host's own address, not a stand-in")
		g.Expect(string(doc)).To(ContainSubstring(fmt.Sprintf("ip_netmask: fd00::%x/64", i+1)))
	}
	g.Expect(whole.Load()).To(BeNumerically("<=", 1), "fifty hosts of one shape: the shape is checked against the whole schema once (or not at all, if an earlier test checked it)")

	bad := []struct{ name, addr4, addr6, gateway, dns string }{
		{"an address with no prefix", "10.1.0.9", "fd00::9/64", "10.1.0.254", "10.1.0.53"},
		{"an octet out of range", "10.1.0.300/24", "fd00::9/64", "10.1.0.254", "10.1.0.53"},
		{"an IPv4-mapped IPv6 address, which os-net-config's pattern refuses", "10.1.0.9/24", "::ffff:10.1.0.9/96", "10.1.0.254", "10.1.0.53"},
		{"a gateway that is a prefix", "10.1.0.9/24", "fd00::9/64", "10.1.0.254/24", "10.1.0.53"},
		{"a DNS server that is no address", "10.1.0.9/24", "fd00::9/64", "10.1.0.254", "ns1"},
	}
	for _, b := range bad {
		list := hostConfig(t, b.addr4, b.addr6, b.gateway, b.dns)
		wantErr := osnetconfig.ValidateValue(hostConfig(t, b.addr4, b.addr6, b.gateway, b.dns), "network_config")
		g.Expect(wantErr).To(HaveOccurred(), b.name+": the whole schema refuses it")
		_, err := osnetconfig.ConfigFile(list)
		g.Expect(err).To(MatchError(wantErr.Error()), b.name+": the same problems as the whole schema gives")
		g.Expect(list).To(Equal(hostConfig(t, b.addr4, b.addr6, b.gateway, b.dns)), b.name+": the list holds its own values again")
	}

	// A shape the schema refuses is refused although its addresses pass.
	list := hostConfig(t, "10.1.0.9/24", "fd00::9/64", "10.1.0.254", "10.1.0.53")
	list[1].(map[string]any)["vlan_id"] = "one hundred"
	_, err := osnetconfig.ConfigFile(list)
	g.Expect(err).To(MatchError(ContainSubstring("network_config[1].vlan_id")))
	g.Expect(err.Error()).NotTo(ContainSubstring("192.0.2."), "no stand-in shows in a problem")
}

// TestAddressRulesAreTheSchemas: the check by shape is sound only if the schema constrains each
// address property, wherever it has it, by the one definition the rule names, and nothing else
// in the schema reaches those properties (a schema-valued additionalProperties or
// patternProperties would). A new schema that breaks this fails here.
func TestAddressRulesAreTheSchemas(t *testing.T) {
	g := NewWithT(t)
	var schema map[string]any
	g.Expect(yaml.Unmarshal(schemaYAML, &schema)).To(Succeed())
	defs := schema["definitions"].(map[string]any)
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/definitions/" + name} }
	route := defs["route"].(map[string]any)["properties"].(map[string]any)
	// What each rule's property must be, wherever it appears.
	want := map[string]any{
		"ip_netmask":  ref("ip_cidr_string_or_param"),
		"destination": ref("ip_cidr_string_or_param"),
		"next_hop":    route["next_hop"],
		"nexthop":     route["nexthop"],
		"dns_servers": ref("list_of_ip_address_string_or_param"),
	}
	rules := osnetconfig.AddressRuleRefs()
	g.Expect(rules).To(HaveLen(len(want)))
	g.Expect(rules["ip_netmask"]).To(Equal("#/definitions/ip_cidr_string_or_param"))
	g.Expect(rules["destination"]).To(Equal("#/definitions/ip_cidr_string_or_param"))
	g.Expect(rules["next_hop"]).To(Equal("#/definitions/route/properties/next_hop"))
	g.Expect(rules["nexthop"]).To(Equal("#/definitions/route/properties/nexthop"))
	// dns_servers is checked item by item: the list's definition is a list of that item, or a
	// param (an object, never a list).
	g.Expect(rules["dns_servers"]).To(Equal("#/definitions/ip_address_string_or_param"))
	g.Expect(defs["list_of_ip_address_string_or_param"]).To(Equal(map[string]any{"oneOf": []any{
		map[string]any{"type": "array", "items": ref("ip_address_string_or_param"), "minItems": float64(0)},
		ref("param"),
	}}))
	for _, branch := range defs["param"].(map[string]any)["oneOf"].([]any) {
		g.Expect(branch.(map[string]any)["type"]).To(Equal("object"), "a param is an object")
	}

	seen := map[string]int{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case map[string]any:
			if ap, ok := t["additionalProperties"]; ok {
				_, isBool := ap.(bool)
				g.Expect(isBool).To(BeTrue(), path+": additionalProperties with a schema would reach address properties")
			}
			g.Expect(t).NotTo(HaveKey("patternProperties"), path)
			g.Expect(t).NotTo(HaveKey("propertyNames"), path)
			g.Expect(t).NotTo(HaveKey("dependencies"), path)
			if props, ok := t["properties"].(map[string]any); ok {
				for name, w := range want {
					if p, has := props[name]; has {
						seen[name]++
						g.Expect(reflect.DeepEqual(p, w)).To(BeTrue(), "%s.properties.%s is %v, not the definition the check holds it to (%v)", path, name, p, w)
					}
				}
			}
			for k, e := range t {
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	walk("schema", schema)
	for name := range want {
		g.Expect(seen[name]).To(BeNumerically(">", 0), name+" is in the schema")
	}
	g.Expect(strings.Count(string(schemaYAML), "dns_servers:")).To(Equal(seen["dns_servers"]), "every dns_servers is a property")
}
