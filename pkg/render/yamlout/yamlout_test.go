package yamlout_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/pkg/render/yamlout"
)

type tagged struct {
	Name    string            `json:"name"`
	MTU     int               `json:"mtu,omitempty"`
	Extra   json.RawMessage   `json:"extra,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Nothing []string          `json:"nothing"`
}

// sameAsSigs checks that v is written byte for byte as sigs.k8s.io/yaml writes it, the
// encoding every consumer test and Secret in the field was made with.
func sameAsSigs(t *testing.T, name string, v any) {
	t.Helper()
	want, wantErr := sigsyaml.Marshal(v)
	got, err := yamlout.Marshal(v)
	if (wantErr != nil) != (err != nil) {
		t.Fatalf("%s: error %v, sigs.k8s.io/yaml's %v", name, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: wrote\n%s\nsigs.k8s.io/yaml writes\n%s", name, got, want)
	}
}

func TestMarshalWritesWhatSigsYAMLWrites(t *testing.T) {
	cases := map[string]any{
		"metaData": map[string]string{"local-hostname": "worker-0", "providerid": "ns/h/m", "yes": "no", "port": "8080", "on": "", "eth10": "a", "eth2": "b"},
		"nested": map[string]any{
			"network": map[string]any{"version": 2, "ethernets": map[string]any{"eth0": map[string]any{
				"match": map[string]any{"macaddress": "52:54:00:00:00:01"}, "mtu": 9000, "dhcp4": false,
				"addresses": []string{"10.0.0.5/24", "2001:db8::5/64"}, "nameservers": map[string]any{"addresses": []any{"8.8.8.8"}},
			}}},
		},
		"scalars that look like others": []any{"true", "1.5", "0x1f", "null", "~", "", " lead", "a: b", "- x", "#c", "multi\nline", "1e3", "012"},
		"numbers":                       []any{0, -1, int32(7), int64(1 << 40), int64(math.MaxInt64), 1.5, 3.0, 1e21, 1e-7, math.Copysign(0, -1)},
		"empty and nil":                 map[string]any{"a": []any{}, "b": map[string]any{}, "c": nil, "d": []string(nil), "e": map[string]string(nil), "f": []map[string]any{{"x": 1}}},
		"struct with json tags":         tagged{Name: "bond0", MTU: 1500, Extra: json.RawMessage(`{"miimon": 100, "mode": "802.3ad", "n": 2.50}`), Nothing: nil},
		"struct in a map":               map[string]any{"s": []tagged{{Name: "x"}}, "n": json.Number("12")},
		"html characters":               map[string]any{"k": "<a>&b"},
		"unsigned":                      map[string]any{"u": uint64(math.MaxUint64), "u8": uint8(3)},
		"invalid UTF-8":                 map[string]any{"s": "a\xffb", "l": []string{"\xfe"}, "m": map[string]string{"k\xff": "v"}, "k\xc3": 1, "c0": "\x01\t"},
	}
	for name, v := range cases {
		sameAsSigs(t, name, v)
	}
}

// A NEL (U+0085) is a line break to YAML: sigs.k8s.io/yaml's re-read folds the one inside a
// string into a space, so the string it writes is not the one it was given. The string is kept.
func TestMarshalKeepsNEL(t *testing.T) {
	out, err := yamlout.Marshal(map[string]any{"s": "a\u0085b"})
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := sigsyaml.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back["s"] != "a\u0085b" {
		t.Errorf("wrote %q, which reads back as %q", out, back["s"])
	}
}

func TestMarshalRefusesWhatJSONRefuses(t *testing.T) {
	if _, err := yamlout.Marshal(map[string]any{"x": math.NaN()}); err == nil {
		t.Error("NaN was written; sigs.k8s.io/yaml refuses it (JSON has no NaN)")
	}
	for _, s := range []string{"del\x7f", "c1\u0086", "\ufffe"} {
		if _, err := yamlout.Marshal(map[string]any{"s": s}); err == nil {
			t.Errorf("%q was written; sigs.k8s.io/yaml refuses it", s)
		}
	}
	if _, err := yamlout.Marshal(map[string]any{"c": make(chan int)}); err == nil {
		t.Error("a channel was written; JSON has none")
	}
}

// FuzzMarshalJSONDocuments feeds arbitrary JSON documents (decoded as a writer would hold them,
// and raw) and compares with sigs.k8s.io/yaml.
func FuzzMarshalJSONDocuments(f *testing.F) {
	for _, seed := range []string{`{"a":1}`, `[1,2.5,"x",null,true]`, `{"links":[{"id":"eth0","mtu":1500,"ethernet_mac_address":"aa"}]}`, `{"n":1e400}`, `{"n":-0,"m":12345678901234567890}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil || strings.ContainsRune(doc, 0x85) {
			return // not JSON; or a NEL, which sigs.k8s.io/yaml folds (TestMarshalKeepsNEL)
		}
		want, wantErr := sigsyaml.Marshal(v)
		got, err := yamlout.Marshal(v)
		if (wantErr != nil) != (err != nil) || !bytes.Equal(got, want) {
			t.Fatalf("%s: wrote %q (%v), sigs.k8s.io/yaml %q (%v)", doc, got, err, want, wantErr)
		}
		raw := json.RawMessage(doc)
		want, wantErr = sigsyaml.Marshal(raw)
		got, err = yamlout.Marshal(raw)
		if (wantErr != nil) != (err != nil) || !bytes.Equal(got, want) {
			t.Fatalf("raw %s: wrote %q (%v), sigs.k8s.io/yaml %q (%v)", doc, got, err, want, wantErr)
		}
	})
}
