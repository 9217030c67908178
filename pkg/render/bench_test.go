package render_test

import (
	"testing"

	"github.com/metalwire/metalwire/pkg/render"
)

// BenchmarkRenderSeedHost renders one host of the seed's Metal3DataTemplate: metaData and
// network_data.json, marshalled as the Secrets hold them.
//
//	go test ./pkg/render -run '^$' -bench RenderSeedHost -benchmem
func BenchmarkRenderSeedHost(b *testing.B) {
	c := loadCase(b, "testdata/golden/seed")
	b.ReportAllocs()
	for b.Loop() {
		md, err := render.MetaData(c.template.MetaData, c.facts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := render.MarshalMetaData(md); err != nil {
			b.Fatal(err)
		}
		nd, err := c.template.Networking(c.facts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := nd.YAML(); err != nil {
			b.Fatal(err)
		}
	}
}
