package manager_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"

	"github.com/metalwire/metalwire/internal/controller/metal3remediation"
	"github.com/metalwire/metalwire/internal/manager"
)

// --remediation-node-mode chooses between tainting and deleting a remediated machine's Node;
// by default (auto) the manager decides as upstream CAPM3 does, and a mistyped mode is refused
// before the manager starts.
func TestRemediationNodeModeFlag(t *testing.T) {
	tests := []struct {
		args    []string
		want    metal3remediation.NodeMode
		wantErr string
	}{
		{args: nil, want: metal3remediation.NodeModeAuto},
		{args: []string{"--remediation-node-mode=taint"}, want: metal3remediation.NodeModeTaint},
		{args: []string{"--remediation-node-mode", "delete"}, want: metal3remediation.NodeModeDelete},
		{args: []string{"--remediation-node-mode=auto"}, want: metal3remediation.NodeModeAuto},
		{args: []string{"--remediation-node-mode=drain"}, wantErr: `invalid argument "drain" for "--remediation-node-mode" flag: unknown remediation node mode "drain"; choose auto, taint or delete`},
	}
	for _, tt := range tests {
		t.Run(caseName(tt.args), func(t *testing.T) {
			g := NewWithT(t)
			o := &manager.Options{}
			fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
			o.AddFlags(fs)
			err := fs.Parse(tt.args)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(o.RemediationNodeMode).To(Equal(tt.want))
		})
	}
}

func caseName(args []string) string {
	if len(args) == 0 {
		return "default"
	}
	return args[len(args)-1]
}
