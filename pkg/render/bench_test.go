package render_test

import (
	"testing"

	"github.com/metalwire/metalwire/pkg/render"
)

// BenchmarkRenderSeedHost renders one host of the seed's Metal3DataTemplate: metaData and
// network_data.json, then marshalled as the Secrets hold them (YAML).
//
//	go test ./pkg/render -run '^$' -bench RenderSeedHost -benchmem
func BenchmarkRenderSeedHost(b *testing.B) {
	c := loadCase(b, "testdata/golden/seed")
	renderBoth := func(b *testing.B) (map[string]string, *render.NetworkData) {
		md, err := render.MetaData(c.template.MetaData, c.facts)
		if err != nil {
			b.Fatal(err)
		}
		nd, err := c.template.Networking(c.facts)
		if err != nil {
			b.Fatal(err)
		}
		return md, nd
	}
	b.Run("render", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			renderBoth(b)
		}
	})
	// Both Secrets' documents, as the Metal3Data controller writes them.
	marshalBoth := func(b *testing.B) *render.NetworkData {
		md, nd := renderBoth(b)
		if _, err := render.MarshalMetaData(md); err != nil {
			b.Fatal(err)
		}
		if _, err := nd.YAML(); err != nil {
			b.Fatal(err)
		}
		return nd
	}
	b.Run("render+marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			marshalBoth(b)
		}
	})
	// What the Metal3Data controller renders for each machine: both Secrets' documents and the
	// os-net-config files derived from the network data (each checked against its schema).
	b.Run("render+marshal+osnetconfig", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalBoth(b).OSNetConfig(c.facts.NICs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
