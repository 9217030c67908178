package devenv_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/internal/devenv"
)

// Against the running environment of this package's TestMain: one MachineDeployment replica on
// two hosts.
func TestObserveCountsTheMachineDeploymentsMachineOnItsHost(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	g.Eventually(func(g Gomega) {
		p, err := devenv.Observe(ctx, env.Client, "default")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p.Machines).To(Equal(1))
		g.Expect(p.Preprovisioning).To(Equal(0))
		g.Expect(p.Done()).To(BeTrue(), "%s: %v", p.Summary(), p.Waiting)
	}, time.Minute, 200*time.Millisecond).Should(Succeed())

	rows, err := devenv.HostTable(ctx, env.Client, env.Simulator.Dir, "default")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rows).To(HaveLen(2))
	var used []devenv.HostRow
	for _, r := range rows {
		if r.Machine != "" {
			used = append(used, r)
		}
	}
	g.Expect(used).To(HaveLen(1))
	g.Expect(used[0].State).To(Equal("provisioned"))
	g.Expect(used[0].Files).To(ConsistOf("meta_data.json", "user_data"), "the example has no network data")
}
