package labelsync

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestParsePrefixes(t *testing.T) {
	tests := []struct {
		name    string
		given   string
		want    map[string]bool
		wantErr string
	}{
		{"one", "example.com", map[string]bool{"example.com": true}, ""},
		{"several with blanks and spaces", " a.example.com, ,b.example.com,", map[string]bool{"a.example.com": true, "b.example.com": true}, ""},
		{"empty", "", map[string]bool{}, ""},
		{"not a subdomain", "example.com,Bad_Prefix", nil, `"Bad_Prefix" is not a label prefix`},
		{"a whole label key", "example.com/rack", nil, `"example.com/rack" is not a label prefix`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := parsePrefixes(tt.given)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				g.Expect(err.Error()).To(ContainSubstring(PrefixAnnotation))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestSyncLabels(t *testing.T) {
	prefixes := map[string]bool{"example.com": true}
	tests := []struct {
		name        string
		host, node  map[string]string
		want        map[string]string
		wantChanged bool
	}{
		{"copies the host's prefixed labels only",
			map[string]string{"example.com/rack": "r1", "other.io/x": "y", "plain": "p"},
			map[string]string{"kubernetes.io/hostname": "n1"},
			map[string]string{"kubernetes.io/hostname": "n1", "example.com/rack": "r1"}, true},
		{"changes a value",
			map[string]string{"example.com/rack": "r2"},
			map[string]string{"example.com/rack": "r1"},
			map[string]string{"example.com/rack": "r2"}, true},
		{"removes what the host no longer has, keeps other prefixes",
			map[string]string{},
			map[string]string{"example.com/rack": "r1", "other.io/x": "y"},
			map[string]string{"other.io/x": "y"}, true},
		{"in step already",
			map[string]string{"example.com/rack": "r1"},
			map[string]string{"example.com/rack": "r1", "n": "1"},
			map[string]string{"example.com/rack": "r1", "n": "1"}, false},
		{"an empty value is a value",
			map[string]string{"example.com/gpu": ""},
			map[string]string{},
			map[string]string{"example.com/gpu": ""}, true},
		{"a prefix is matched whole, not as a string prefix",
			map[string]string{"sub.example.com/rack": "r1", "example.community/x": "y"},
			nil,
			map[string]string{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, changed := syncLabels(tt.host, tt.node, prefixes)
			g.Expect(got).To(Equal(tt.want))
			g.Expect(changed).To(Equal(tt.wantChanged))
		})
	}
}
