package v1alpha1_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The address-ordering rules in ippool_types.go are too long to write by hand. They are built
// here from small readable pieces; this test fails when a marker and its builder drift apart.
// To change a rule: change the builder, run the test, paste the rule it prints into the marker,
// and run make generate.

// bind gives value a name inside body: CEL in Kubernetes has no cel.bind, but a one-element list
// comprehension does the same, and its cost is known to the API server's estimator.
func bind(name, value, body string) string {
	return fmt.Sprintf("[%s].map(%s, %s)[0]", value, name, body)
}

// pad left-pads a string expression with zeros to width characters (the string has 1..width).
func pad(s string, width int) string {
	return fmt.Sprintf("('%s' + %s).substring(size(%s) - 1)", strings.Repeat("0", width-1), s, s)
}

// ipv4Key is the address as a 32-bit number, read between the dots with indexOf/substring: the
// API server cannot bound the cost of anything done with split()'s results, and refuses it.
func ipv4Key(x string) string {
	octet := func(from, to string) string {
		if to == "" {
			return fmt.Sprintf("int(%s.substring(%s))", x, from)
		}
		return fmt.Sprintf("int(%s.substring(%s, %s))", x, from, to)
	}
	sum := fmt.Sprintf("%s * 16777216 + %s * 65536 + %s * 256 + %s",
		octet("0", "d1"), octet("d1 + 1", "d2"), octet("d2 + 1", "d3"), octet("d3 + 1", ""))
	return bind("d1", x+".indexOf('.')", bind("d2", x+".indexOf('.', d1 + 1)", bind("d3", x+".indexOf('.', d2 + 1)", sum)))
}

// ipv6Key is the address as 32 lowercase hex digits, so that string order is address order: "::"
// becomes a marker z, the marker is replaced by the missing zero groups, and each of the eight
// groups is padded to four digits.
func ipv6Key(x string) string {
	groups := []string{"e.substring(0, c1)"}
	for i := 1; i < 7; i++ {
		groups = append(groups, fmt.Sprintf("e.substring(c%d + 1, c%d)", i, i+1))
	}
	groups = append(groups, "e.substring(c7 + 1)")
	padded := make([]string, len(groups))
	for i, g := range groups {
		padded[i] = pad(g, 4)
	}
	body := strings.Join(padded, " + ")
	for i := 7; i >= 1; i-- {
		from := "e.indexOf(':')"
		if i > 1 {
			from = fmt.Sprintf("e.indexOf(':', c%d + 1)", i-1)
		}
		body = bind(fmt.Sprintf("c%d", i), from, body)
	}
	// zeros[k] is k+1 zero groups; c has size(c.split(':')) groups counting the marker.
	zeros := make([]string, 8)
	for k := range zeros {
		zeros[k] = "'" + strings.TrimSuffix(strings.Repeat("0:", k+1), ":") + "'"
	}
	body = bind("e", fmt.Sprintf("c.contains('z') ? c.replace('z', [%s][8 - size(c.split(':'))]) : c", strings.Join(zeros, ", ")), body)
	body = bind("c", "b.endsWith(':') ? b.substring(0, size(b) - 1) : b", body)
	body = bind("b", "a.startsWith(':') ? a.substring(1) : a", body)
	return bind("a", x+".lowerAscii().replace('::', ':z:')", body)
}

// notAfter says lo <= hi for two valid addresses of one family. IPv6 written with a dotted
// IPv4 tail (64:ff9b::192.0.2.1) is let through unchecked: the key does not read that form, and
// the allocator treats a reversed range as empty.
func notAfter(lo, hi string) string {
	return fmt.Sprintf("(ip(%s).family() == 4 ? %s <= %s : (%s.contains('.') || %s.contains('.') || %s <= %s))",
		lo, ipv4Key(lo), ipv4Key(hi), lo, hi, ipv6Key(lo), ipv6Key(hi))
}

func TestOrderingRulesMatchTheirBuilders(t *testing.T) {
	want := map[string]string{
		"spec.pools[].end after start": "!has(self.start) || !has(self.end) || !isIP(self.start) || !isIP(self.end) || " +
			"ip(self.start).family() != ip(self.end).family() || " + notAfter("self.start", "self.end"),
		"spec.excludedAddresses[] ranges": "isIP(self) || isCIDR(self) || (self.contains('-') && " +
			bind("lo", "self.substring(0, self.indexOf('-'))", bind("hi", "self.substring(self.indexOf('-') + 1)",
				"isIP(lo) && isIP(hi) && ip(lo).family() == ip(hi).family() && "+notAfter("lo", "hi"))) + ")",
	}
	rules := crdRules(t, "ipam.metal3.io_ippools.yaml")
	for name, rule := range want {
		t.Run(name, func(t *testing.T) {
			if !slices.Contains(rules, rule) {
				t.Errorf("the CRD has no rule equal to the built one; put this rule in the marker, then run make generate:\n%s", rule)
			}
		})
	}
}

// crdRules collects every x-kubernetes-validations rule of a generated CRD.
func crdRules(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "crd", "bases", file))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var rules []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if list, ok := v["x-kubernetes-validations"].([]any); ok {
				for _, r := range list {
					rules = append(rules, r.(map[string]any)["rule"].(string))
				}
			}
			for _, child := range v {
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(doc)
	return rules
}
