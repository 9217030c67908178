package render_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalwire/metalwire/pkg/render"
)

// FuzzRender feeds arbitrary templates and host facts through every output. Whatever the
// input, rendering must not panic; a failure must be a *render.Error naming a field; and a
// document that renders must pass the schema Ironic enforces.
//
//	go test ./pkg/render -run '^$' -fuzz FuzzRender -fuzztime 60s
func FuzzRender(f *testing.F) {
	templates, _ := filepath.Glob("testdata/golden/*/template.yaml")
	for _, path := range templates {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), 3, "eth0=52:54:00:6c:3c:01,eth1=52:54:00:6c:3c:02,ens2f0=3c:fd:fe:00:07:00,ens2f1=3c:fd:fe:00:07:01,eno1=52:54:00:00:01:01,eno2=52:54:00:00:01:02",
			"52:54:00:6c:3c:01", "provisioning=172.22.0.5/24,external=10.0.100.24/24,external6=2001:db8::24/64,storage-r12=10.12.0.9/22", true)
	}
	f.Add("apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: Metal3DataTemplate\nspec: {networkData: {links: {vlans: [{id: a, vlanID: 1, vlanLink: a}]}}}", 0, "", "", "", false)
	f.Fuzz(func(t *testing.T, template string, index int, nics, bootMAC, pools string, provisioned bool) {
		tmpl, err := render.DecodeTemplate([]byte(template))
		if err != nil {
			return // not a template: DecodeTemplate said so without panicking
		}
		facts := &render.Facts{Index: index % 100000, Namespace: "ns", BootMAC: bootMAC, Host: render.Object{Name: "host"}}
		if provisioned {
			facts.Machine = &render.Object{Name: "machine"}
			facts.Metal3Machine = &render.Object{Name: "m3m"}
		}
		for _, pair := range strings.Split(nics, ",") {
			if name, mac, ok := strings.Cut(pair, "="); ok {
				facts.NICs = append(facts.NICs, render.NIC{Name: name, MAC: mac})
			}
		}
		byName := map[string]render.PoolAddress{}
		for _, pair := range strings.Split(pools, ",") {
			if name, cidr, ok := strings.Cut(pair, "="); ok {
				addr, prefix, _ := strings.Cut(cidr, "/")
				n := 0
				for _, c := range prefix {
					n = n*10 + int(c-'0')
				}
				byName[name] = render.PoolAddress{Address: addr, Prefix: n, Gateway: addr, DNSServers: []string{addr}}
			}
		}
		refs, err := tmpl.Pools(facts)
		expectFieldError(t, err)
		facts.Pools = render.PoolsByName(byName, refs)

		_, err = render.MetaData(tmpl.MetaData, facts)
		expectFieldError(t, err)
		nd, err := tmpl.Networking(facts)
		expectFieldError(t, err)
		if err != nil {
			return
		}
		if _, err := nd.JSON(); err != nil {
			t.Fatalf("rendered network data does not marshal: %v", err)
		}
		// The netplan and nmstate writers may refuse a setting they have no name for; they must
		// not panic.
		_, _ = nd.Netplan()
		_, _ = nd.NMState()
		if err := validate(t, nd); err != nil {
			t.Fatalf("rendered network data fails the Ironic schema: %v\ntemplate:\n%s", err, template)
		}
	})
}

func expectFieldError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *render.Error
	if !errors.As(err, &e) || e.Field == "" || e.Detail == "" {
		t.Fatalf("error without a field: %#v", err)
	}
}
