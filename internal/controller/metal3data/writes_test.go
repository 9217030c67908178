package metal3data_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// TestRenderingWritesEachObjectOnce: a machine whose host is ready is rendered with one write of
// the Metal3Data after its creation (its status: the Secret names are set when it is created)
// and one write of the claim (its status, naming the rendered data), and nothing is written
// after that. Waits that pass within the quiet window are not written.
func TestRenderingWritesEachObjectOnce(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, ns, managerOptions{quietWaits: time.Minute})
	pool(t, ns, "prov", "192.168.0.10", "192.168.0.20", 24, "")
	template(t, ns, "tmpl", specOf(t, simpleTemplate))
	host(t, ns, "node-0", map[string]string{"example.com/rack": "r1"}, nil, "", "eth0=52:54:00:00:00:01")

	claims := env.CountModified(t, ns, &infrav1.Metal3DataClaimList{})
	datas := env.CountModified(t, ns, &infrav1.Metal3DataList{})
	machine(t, ns, "m3m-0", "tmpl", machineOpts{host: "node-0"})
	data := renderedData(t, ns, "m3m-0")

	g := NewWithT(t)
	g.Consistently(func() map[string]int { return claims() }).WithTimeout(3*time.Second).WithPolling(poll).
		Should(Equal(map[string]int{"m3m-0": 1}), "the claim's status is written once, when its data is rendered")
	g.Expect(datas()).To(Equal(map[string]int{data.Name: 1}), "the Metal3Data is written once after its creation: its status")
}
