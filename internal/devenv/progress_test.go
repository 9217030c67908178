package devenv

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
)

func TestProgressDoneAndSummary(t *testing.T) {
	for _, tc := range []struct {
		name        string
		given       Progress
		wantDone    bool
		wantSummary string
	}{
		{"nothing asked for is not a success", Progress{}, false, "0/0 hosts provisioned"},
		{"all provisioned, no spares", Progress{Machines: 4, Provisioned: 4}, true, "4/4 hosts provisioned"},
		{"one missing", Progress{Machines: 4, Provisioned: 3, Waiting: []string{"Machine w: no host yet"}}, false, "3/4 hosts provisioned"},
		{"spares still registering", Progress{Machines: 1, Provisioned: 1, Preprovisioning: 2, Preprovisioned: 1, Waiting: []string{"host s: ..."}}, false,
			"1/1 hosts provisioned, 1/2 pre-provisioned hosts inspected with their network data"},
		{"counts match but a machine is still being deleted", Progress{Machines: 2, Provisioned: 2, Waiting: []string{"Machine old: being deleted"}}, false, "2/2 hosts provisioned"},
		{"everything", Progress{Machines: 4, Provisioned: 4, Preprovisioning: 2, Preprovisioned: 2}, true,
			"4/4 hosts provisioned, 2/2 pre-provisioned hosts inspected with their network data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(tc.given.Done()).To(Equal(tc.wantDone))
			g.Expect(tc.given.Summary()).To(Equal(tc.wantSummary))
		})
	}
}

func TestFirstFalseConditionSaysWhy(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg}
	}
	for _, tc := range []struct {
		name  string
		given []metav1.Condition
		want  string
	}{
		{"none yet", nil, "no condition says why yet"},
		{"all true", []metav1.Condition{cond("Ready", metav1.ConditionTrue, "Ready", "")}, "no condition says why yet"},
		{"the cause wins over the Ready summary", []metav1.Condition{
			cond("Ready", metav1.ConditionFalse, "NotReady", "summary"),
			cond("AssociateBareMetalHost", metav1.ConditionFalse, "AssociateBareMetalHostFailed", "no host matches"),
		}, "AssociateBareMetalHost AssociateBareMetalHostFailed: no host matches"},
		{"Ready alone", []metav1.Condition{cond("Ready", metav1.ConditionFalse, "WaitingForOwnerCluster", "")}, "Ready WaitingForOwnerCluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(firstFalseCondition(tc.given)).To(Equal(tc.want))
		})
	}
}

func TestStaticAddressesReadWhatTheHostBootedWith(t *testing.T) {
	const provisioned = `{"networks":[{"id":"a","ip_address":"192.0.2.7"},{"id":"b","type":"ipv4_dhcp"},{"id":"c","ip_address":"2001:db8::7"}]}`
	const preprov = `{"networks":[{"id":"p","ip_address":"172.22.0.100"}]}`
	for _, tc := range []struct {
		name    string
		state   bmov1.ProvisioningState
		files   map[string]string
		want    []string
		wantErr string
	}{
		{"provisioned: its network_data.json, DHCP networks have no address", bmov1.StateProvisioned,
			map[string]string{"network_data.json": provisioned, "preprov_network_data.json": preprov}, []string{"192.0.2.7", "2001:db8::7"}, ""},
		{"available: the pre-provisioning data, not what it last booted", bmov1.StateAvailable,
			map[string]string{"network_data.json": provisioned, "preprov_network_data.json": preprov}, []string{"172.22.0.100"}, ""},
		{"no files yet", bmov1.StateRegistering, nil, nil, ""},
		{"not JSON", bmov1.StateProvisioned, map[string]string{"network_data.json": "links: []"}, nil, "network_data.json is not network_data.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			dir := t.TempDir()
			for name, content := range tc.files {
				g.Expect(os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600)).To(Succeed())
			}
			got, err := staticAddresses(dir, tc.state)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestPrintHostTable(t *testing.T) {
	g := NewWithT(t)
	var b bytes.Buffer
	g.Expect(PrintHostTable(&b, []HostRow{
		{Host: "host-0", State: "provisioned", Machine: "demo-cp-0", IPs: []string{"192.0.2.7", "2001:db8::7"}, Dir: "d/hosts/host-0", Files: []string{"meta_data.json", "network_data.json"}},
		{Host: "host-10", State: "registering", Dir: "d/hosts/host-10"},
	})).To(Succeed())
	g.Expect(b.String()).To(Equal(
		"HOST     STATE        MACHINE    IPS                    FILES\n" +
			"host-0   provisioned  demo-cp-0  192.0.2.7,2001:db8::7  d/hosts/host-0/{meta_data.json,network_data.json}\n" +
			"host-10  registering  -          -                      -\n"))
}
