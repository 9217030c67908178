package render

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// Every golden network_data.json reads back into the model and writes out byte for byte: the
// Secret a Metal3Data wrote is what the host-switch check reads.
func TestParseNetworkDataRoundTrips(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*/network_data.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden network_data.json (%v)", err)
	}
	for _, f := range files {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		yamlForm, err := os.ReadFile(filepath.Join(filepath.Dir(f), "network_data.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range [][]byte{want, yamlForm} {
			nd, err := ParseNetworkData(in)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			got, err := nd.JSON()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: read back and written again:\n%s\nwant\n%s", f, got, want)
			}
		}
	}
}

func TestCards(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/bridge/network_data.json")
	if err != nil {
		t.Fatal(err)
	}
	nd, err := ParseNetworkData(b)
	if err != nil {
		t.Fatal(err)
	}
	// bond0 (active-backup over eno1, eno2) is in bridge br-ex, which has an address; vlan30 on
	// bond0 is in br-vm, which has one too: untagged and VLAN 30 on both cards.
	bond := &fabric.HostBond{Name: "bond0", Mode: "active-backup", Members: []string{"52:54:00:00:01:01", "52:54:00:00:01:02"}}
	want := []fabric.HostCard{
		{MAC: "52:54:00:00:01:01", Name: "eno1", Untagged: true, Tagged: []int{30}, Bond: bond},
		{MAC: "52:54:00:00:01:02", Name: "eno2", Untagged: true, Tagged: []int{30}, Bond: bond},
	}
	if got := nd.Cards(); !reflect.DeepEqual(got, want) {
		t.Fatalf("cards\n%+v\nwant\n%+v", got, want)
	}

	// A VLAN straight on a card, no address on the card itself.
	nd = &NetworkData{
		Links: []Link{
			{Type: "phy", ID: "eno1", MAC: "aa:00:00:00:00:01"},
			{Type: LinkVLAN, ID: "eno1.7", VLANID: 7, VLANLink: "eno1"},
			{Type: "phy", ID: "eno2", Name: "data0", MAC: "aa:00:00:00:00:02"},
		},
		Networks: []Network{{ID: "n", Link: "eno1.7"}, {ID: "m", Link: "eno2"}},
	}
	want = []fabric.HostCard{
		{MAC: "aa:00:00:00:00:01", Name: "eno1", Tagged: []int{7}},
		{MAC: "aa:00:00:00:00:02", Name: "data0", Untagged: true},
	}
	if got := nd.Cards(); !reflect.DeepEqual(got, want) {
		t.Fatalf("cards\n%+v\nwant\n%+v", got, want)
	}
}
