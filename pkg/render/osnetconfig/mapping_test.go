package osnetconfig_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/pkg/render/osnetconfig"
)

func TestValidateMapping(t *testing.T) {
	tests := []struct {
		name    string
		given   string
		wantErr string // empty: valid
	}{
		{name: "aliases to MACs and to kernel names", given: `
interface_mapping:
  nic1: "52:54:00:aa:bb:01"
  nic2: 52:54:00:aa:bb:02
  em0: eno3
`},
		{name: "one MAC mapped twice", given: "interface_mapping: {nic1: '52:54:00:aa:bb:01', nic2: '52:54:00:aa:bb:01'}",
			wantErr: "52:54:00:aa:bb:01 is mapped by both nic1 and nic2"},
		{name: "one MAC twice, written differently: os-net-config compares them normalised",
			given:   "interface_mapping: {nic1: '52:54:00:AA:BB:01', nic2: '52-54-00-aa-bb-01'}",
			wantErr: "mapped by both nic1 and nic2"},
		{name: "one device name mapped twice", given: "interface_mapping: {nic1: eno1, nic2: eno1}",
			wantErr: "eno1 is mapped by both nic1 and nic2"},
		{name: "no interface_mapping", given: "nic1: eno1", wantErr: "has no interface_mapping"},
		{name: "a key beside interface_mapping", given: "interface_mapping: {nic1: eno1}\nnic2: eno2", wantErr: `top-level key "nic2"`},
		{name: "a list instead of a mapping", given: "interface_mapping: [eno1]", wantErr: "interface_mapping is not a mapping ([eno1])"},
		{name: "an empty value", given: "interface_mapping: {nic1: ''}", wantErr: "interface_mapping.nic1 is empty"},
		{name: "a number for a value", given: "interface_mapping: {nic1: 5}", wantErr: "interface_mapping.nic1 is 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := osnetconfig.ValidateMapping([]byte(tt.given))
			if tt.wantErr == "" {
				NewWithT(t).Expect(err).NotTo(HaveOccurred())
				return
			}
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}
