package manager_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"

	"github.com/metalwire/metalwire/internal/manager"
)

// A CAPM3 deployment's arguments carry over: the flag names upstream's manager takes are
// accepted and mean the same.
func TestCAPM3FlagsCarryOver(t *testing.T) {
	tests := []struct {
		name            string
		env             string
		args            []string
		wantIPReuse     bool
		wantFastTrack   bool
		wantFilter      string
		wantConcurrency map[string]int
	}{
		{name: "defaults", wantConcurrency: map[string]int{}},
		{name: "CAPM3's name for --ip-reuse", args: []string{"--enable-bmh-name-based-preallocation"}, wantIPReuse: true, wantConcurrency: map[string]int{}},
		{name: "--ip-reuse still works", args: []string{"--ip-reuse"}, wantIPReuse: true, wantConcurrency: map[string]int{}},
		{name: "watch filter", args: []string{"--watch-filter=team-a"}, wantFilter: "team-a", wantConcurrency: map[string]int{}},
		{name: "per-controller concurrency beside --concurrency",
			args:            []string{"--concurrency=7", "--metal3machine-concurrency=3", "--metal3labelsync-concurrency=1", "--metal3data-concurrency=0"},
			wantConcurrency: map[string]int{"metal3machine": 3, "metal3labelsync": 1}},
		{name: "fast track from CAPM3_FAST_TRACK", env: "true", wantFastTrack: true, wantConcurrency: map[string]int{}},
		{name: "CAPM3_FAST_TRACK=false", env: "false", wantConcurrency: map[string]int{}},
		{name: "--fast-track=false wins over the environment", env: "true", args: []string{"--fast-track=false"}, wantConcurrency: map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			t.Setenv("CAPM3_FAST_TRACK", tt.env)
			o := &manager.Options{}
			fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
			o.AddFlags(fs)
			g.Expect(fs.Parse(tt.args)).To(Succeed())
			g.Expect(o.IPReuse).To(Equal(tt.wantIPReuse))
			g.Expect(o.FastTrack).To(Equal(tt.wantFastTrack))
			g.Expect(o.WatchFilter).To(Equal(tt.wantFilter))
			g.Expect(o.ControllerConcurrency()).To(Equal(tt.wantConcurrency))
		})
	}
}
