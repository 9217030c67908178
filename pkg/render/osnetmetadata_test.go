package render_test

import (
	"encoding/base64"
	"testing"

	. "github.com/onsi/gomega"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render"
)

func decoded(g Gomega, m map[string]string, key string) string {
	g.Expect(m).To(HaveKey(key))
	b, err := base64.StdEncoding.DecodeString(m[key])
	g.Expect(err).NotTo(HaveOccurred(), "metaData %s is base64", key)
	return string(b)
}

// The host's metaData carries the rendered files, base64, beside the template's own keys.
func TestHostMetaDataCarriesTheOSNetConfigFiles(t *testing.T) {
	g := NewWithT(t)
	tmpl := bondOSNetConfig()
	onc, err := render.OSNetConfigFromTemplate(tmpl, hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	md := &infrav1.MetaData{Strings: []infrav1.MetaDataString{{Key: "role", Value: "worker"}}}
	m, err := render.HostMetaData(md, tmpl, onc, hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m).To(HaveKeyWithValue("role", "worker"))
	g.Expect(decoded(g, m, render.OSNetConfigMetaDataKey)).To(Equal(string(onc.Config)))
	g.Expect(decoded(g, m, render.OSNetConfigMappingMetaDataKey)).To(Equal(string(onc.Mapping)))
	g.Expect(m).NotTo(HaveKey(render.NetplanMetaDataKey))

	// Without osNetConfig, nothing is added.
	plain, err := render.HostMetaData(md, nil, nil, hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plain).NotTo(HaveKey(render.OSNetConfigMetaDataKey))

	// A metaData key of the same name is refused, not overwritten.
	md.Strings = append(md.Strings, infrav1.MetaDataString{Key: render.OSNetConfigMappingMetaDataKey, Value: "x"})
	_, err = render.HostMetaData(md, tmpl, onc, hostFacts())
	g.Expect(err).To(MatchError(`metaData: key "os_net_config_mapping" is where osNetConfig puts its file for the host's bootstrap data; rename the metaData key`))
}

// format netplan carries the netplan file only, converted as phase 1's --format netplan does.
func TestHostMetaDataNetplan(t *testing.T) {
	g := NewWithT(t)
	tmpl := bondOSNetConfig()
	tmpl.Format = infrav1.OSNetConfigFormatNetplan
	onc, err := render.OSNetConfigFromTemplate(tmpl, hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	m, err := render.HostMetaData(nil, tmpl, onc, hostFacts())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m).NotTo(HaveKey(render.OSNetConfigMetaDataKey))
	plan := decoded(g, m, render.NetplanMetaDataKey)
	g.Expect(plan).To(And(ContainSubstring("bond0:"), ContainSubstring("- 192.168.10.5/24"), ContainSubstring("macaddress: \"52:54:00:00:00:01\""), ContainSubstring("set-name: nic1")))

	// What netplan cannot say fails the rendering: no host gets a broken file.
	tmpl.Template = "- {type: interface, name: nic1, ethtool_opts: 'speed 1000'}\n"
	_, err = render.OSNetConfigFromTemplate(tmpl, hostFacts())
	g.Expect(err).To(MatchError(ContainSubstring("osNetConfig.format: netplan: the configuration rendered for host host-a: network_config[0].ethtool_opts has no netplan equivalent")))
}
