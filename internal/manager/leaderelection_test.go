package manager_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"

	"github.com/metalwire/metalwire/internal/manager"
)

// Lease settings client-go would reject (or that let two leaders overlap) are refused before
// the manager starts, naming the flags.
func TestLeaderElectionSettingsMustNest(t *testing.T) {
	for _, args := range [][]string{
		{"--leader-elect-lease-duration=10s", "--leader-elect-renew-deadline=10s"},
		{"--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=2s"},
	} {
		g := NewWithT(t)
		o := &manager.Options{}
		fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
		o.AddFlags(fs)
		g.Expect(fs.Parse(append(args, "--kubeconfig=/nonexistent"))).To(Succeed())
		err := manager.Run(context.Background(), o, nil)
		g.Expect(err).To(MatchError(ContainSubstring("--leader-elect-retry-period")), "%v", args)
		g.Expect(err).To(MatchError(ContainSubstring("< --leader-elect-lease-duration")), "%v", args)
	}
}
