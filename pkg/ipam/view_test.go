package ipam

import (
	"reflect"
	"strings"
	"testing"
)

func TestAllocationViewIsTheSeedsConfigMapData(t *testing.T) {
	keys := map[string]string{"p1000": "ny-1000-10.60.10.0/24", "p1001": "ny-1001-10.60.20.0/24"}
	got, err := AllocationView(keys, []Held{
		{Pool: "p1000", Claim: "machine-2", Address: "10.60.10.3"},
		{Pool: "p1000", Claim: "machine-1", Address: "10.60.10.2"},
		{Pool: "other", Claim: "machine-9", Address: "192.168.0.9"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"ny-1000-10.60.10.0_24": "{\n  \"machine-1\": \"10.60.10.2\",\n  \"machine-2\": \"10.60.10.3\"\n}",
		"ny-1001-10.60.20.0_24": "{}",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("view\n got %q\nwant %q", got, want)
	}
	_, err = AllocationView(map[string]string{"a": "k", "b": "k"}, nil)
	if err == nil || !strings.Contains(err.Error(), "IPPools a and b both carry") {
		t.Errorf("two pools with one key: %v", err)
	}
}
