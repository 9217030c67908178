package render_test

import (
	"testing"

	. "github.com/onsi/gomega"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render"
)

const jinjaBondTemplate = `- type: linux_bond
  name: bond0
  bonding_options: mode=active-backup
  addresses:
  - ip_netmask: {{ ip['prov'] }}
  routes:
  - default: true
    next_hop: {{ config['prov'].gateway }}
  dns_servers: {{ config['prov'].dnsServers }}
  members:
  - type: interface
    name: nic1
  - type: interface
    name: nic2
# {{ node }} of {{ unit }} in {{ config['prov'].cidr }}
`

func bondOSNetConfig() *infrav1.OSNetConfigTemplate {
	return &infrav1.OSNetConfigTemplate{
		Template: jinjaBondTemplate, Unit: "workers",
		Networks:   []infrav1.OSNetConfigNetwork{{Name: "prov", IPPool: "pool4"}},
		Interfaces: []infrav1.OSNetConfigInterface{{Alias: "nic1", HostInterface: "eno1"}, {Alias: "nic2", HostInterface: "eno2"}},
	}
}

func TestRenderOSNetConfigTemplate(t *testing.T) {
	g := NewWithT(t)
	onc, err := render.OSNetConfigFromTemplate(bondOSNetConfig(), hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(onc.Config)).To(Equal(`network_config:
- addresses:
  - ip_netmask: 192.168.10.5/24
  bonding_options: mode=active-backup
  dns_servers:
  - 192.168.10.2
  - 192.168.10.3
  members:
  - name: nic1
    type: interface
  - name: nic2
    type: interface
  name: bond0
  routes:
  - default: true
    next_hop: 192.168.10.1
  type: linux_bond
`))
	g.Expect(string(onc.Mapping)).To(Equal("interface_mapping:\n  nic1: \"52:54:00:00:00:01\"\n  nic2: \"52:54:00:00:00:02\"\n"))
}

func TestRenderOSNetConfigTemplateMACMappings(t *testing.T) {
	g := NewWithT(t)
	tmpl := bondOSNetConfig()
	tmpl.Template = "- type: interface\n  name: nic1\n  # {{ node }}\n  use_dhcp: {{ node == 'rack1-0' }}\n"
	tmpl.Interfaces = nil
	tmpl.MACMappings = []infrav1.OSNetConfigMACMapping{
		{Name: "rack1-1", Interfaces: map[string]infrav1.MACAddress{"nic1": "52:54:00:00:00:09"}},
		{Name: "rack1-0", Interfaces: map[string]infrav1.MACAddress{"nic1": "52:54:00:00:00:02", "nic2": "52:54:00:00:00:01"}},
	}
	onc, err := render.OSNetConfigFromTemplate(tmpl, hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(onc.Config)).To(ContainSubstring("use_dhcp: true"), "node is the matched entry's name")
	g.Expect(string(onc.Mapping)).To(Equal("interface_mapping:\n  nic1: \"52:54:00:00:00:02\"\n  nic2: \"52:54:00:00:00:01\"\n"))

	// networkData's fromHostInterface finds the NIC an alias maps to.
	facts, err := render.WithOSNetConfigAliases(tmpl, hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(facts.NICs).To(ContainElement(render.NIC{Name: "nic1", MAC: "52:54:00:00:00:02"}))
	g.Expect(hostFacts().NICs).To(HaveLen(2), "the host's own facts are not changed")

	tmpl.MACMappings = tmpl.MACMappings[:1]
	_, err = render.OSNetConfigFromTemplate(tmpl, hostFacts())
	g.Expect(err).To(MatchError(`osNetConfig.macMappings: host host-a (NICs eno1=52:54:00:00:00:01, eno2=52:54:00:00:00:02) has the MACs of none of rack1-1; add an entry with the host's MACs, or map aliases to NIC names in osNetConfig.interfaces`))
	g.Expect(render.IsRetryable(err)).To(BeFalse())
}

func TestRenderOSNetConfigTemplateErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		change    func(*infrav1.OSNetConfigTemplate, *render.Facts)
		wantErr   []string
		retryable bool
	}{
		{name: "a typo in a name", change: func(t *infrav1.OSNetConfigTemplate, _ *render.Facts) {
			t.Template = "- type: interface\n  name: nic1\n  mtu: {{ config['prov'].mtu }}\n"
		}, wantErr: []string{"osNetConfig.template: rendering for host host-a:", "mtu"}},
		{name: "a network with no pool", change: func(t *infrav1.OSNetConfigTemplate, _ *render.Facts) {
			t.Template = "- type: interface\n  name: nic1\n  addresses: [{ip_netmask: {{ ip['storage'] }}}]\n"
		}, wantErr: []string{"osNetConfig.template: rendering for host host-a:", "storage"}},
		{name: "not Jinja2", change: func(t *infrav1.OSNetConfigTemplate, _ *render.Facts) {
			t.Template = "- type: interface\n  name: {{ nic1\n"
		}, wantErr: []string{"osNetConfig.template: is not a valid Jinja2 template"}},
		{name: "not os-net-config", change: func(t *infrav1.OSNetConfigTemplate, _ *render.Facts) {
			t.Template = "- type: interface\n  name: nic1\n  adresses: []\n"
		}, wantErr: []string{"osNetConfig.template: rendered for host host-a: not valid os-net-config: network_config[0]", "adresses", "fix the template"}},
		{name: "a NIC the host lacks", change: func(t *infrav1.OSNetConfigTemplate, _ *render.Facts) {
			t.Interfaces[1].HostInterface = "eno9"
		}, wantErr: []string{`osNetConfig.interfaces[1].hostInterface: host host-a has no NIC "eno9"; its NICs are eno1=52:54:00:00:00:01, eno2=52:54:00:00:00:02`}},
		{name: "a host not inspected", change: func(_ *infrav1.OSNetConfigTemplate, f *render.Facts) { f.NICs = nil },
			wantErr: []string{"osNetConfig: host host-a has no inspected NICs yet"}, retryable: true},
		{name: "an address not allocated yet", change: func(t *infrav1.OSNetConfigTemplate, _ *render.Facts) {
			t.Networks[0].IPPool = "later"
		}, wantErr: []string{"osNetConfig.networks[0]: waiting for an address from pool later"}, retryable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tmpl, facts := bondOSNetConfig(), hostFacts()
			tc.change(tmpl, facts)
			_, err := render.OSNetConfigFromTemplate(tmpl, facts)
			g.Expect(err).To(HaveOccurred())
			for _, want := range tc.wantErr {
				g.Expect(err.Error()).To(ContainSubstring(want))
			}
			g.Expect(render.IsRetryable(err)).To(Equal(tc.retryable))
		})
	}
}

func TestOSNetConfigPools(t *testing.T) {
	known := []render.PoolRef{render.NewPoolRef("", "", "pool4")}
	got := render.OSNetConfigPools(&infrav1.OSNetConfigTemplate{Networks: []infrav1.OSNetConfigNetwork{{Name: "a", IPPool: "pool4"}, {Name: "b", IPPool: "pool9"}}}, known)
	NewWithT(t).Expect(got).To(Equal([]render.PoolRef{render.NewPoolRef("", "", "pool4"), render.NewPoolRef("", "", "pool9")}), "one claim per pool, shared with networkData")
}
