package equinixmetal_test

import (
	"context"
	"testing"

	"github.com/metalwire/metalwire/internal/switchdriver/equinixmetal"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// A device's events, read through the API (the fake checks the request and its answer against
// the OpenAPI description): nothing yet, then the script's running, then the latest of its
// final states; the platform's own network_configuration_failed counts the same.
func TestHostReportsFollowTheDeviceEvents(t *testing.T) {
	r := newRig(t)
	other := r.api.AddDevice("node-1", "da")
	ctx := context.Background()
	reports := func() map[string]fabric.HostReport {
		t.Helper()
		sess, err := r.drv.Connect(ctx, r.ep)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sess.Close() }()
		got, err := sess.(fabric.HostReporter).HostReports(ctx, []string{r.port("eth1"), r.port("bond0"), other + "/bond0"})
		if err != nil {
			t.Fatal(err)
		}
		byHost := map[string]fabric.HostReport{}
		for port, rep := range got {
			if dev, _, _ := equinixmetal.SplitPort(port); rep.Host != dev {
				t.Fatalf("port %s: the report is of host %q", port, rep.Host)
			}
			byHost[rep.Host] = rep
		}
		return byHost
	}
	expect := func(want map[string]fabric.HostReport) {
		t.Helper()
		if got := reports(); len(got) != len(want) || !equalReports(got, want) {
			t.Fatalf("reports: got %+v, want %+v", got, want)
		}
	}

	r.api.AddEvent(r.dev, "instance.created", "", "Device created") // not the OS step's
	expect(map[string]fabric.HostReport{})

	r.api.AddEvent(r.dev, "user.running", "running", "Configuring Network")
	expect(map[string]fabric.HostReport{r.dev: {Host: r.dev, Message: "Configuring Network"}})

	r.api.AddEvent(r.dev, "user.failed", "failed", "Network configuration failed: bond0.1000")
	r.api.AddEvent(other, equinixmetal.EventNetworkConfigSuccess, "", "Network configuration successful")
	expect(map[string]fabric.HostReport{
		r.dev: {Host: r.dev, Final: true, Failed: true, Message: "Network configuration failed: bond0.1000"},
		other: {Host: other, Final: true, Message: "Network configuration successful"},
	})

	// Run again by hand, the script succeeds: the latest event wins.
	r.api.AddEvent(r.dev, "user.succeeded", "succeeded", "Network configuration successful")
	expect(map[string]fabric.HostReport{
		r.dev: {Host: r.dev, Final: true, Message: "Network configuration successful"},
		other: {Host: other, Final: true, Message: "Network configuration successful"},
	})
}

func equalReports(a, b map[string]fabric.HostReport) bool {
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}
