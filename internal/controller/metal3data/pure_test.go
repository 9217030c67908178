package metal3data

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	"github.com/metalwire/metalwire/pkg/render"
)

func TestAddressesSummary(t *testing.T) {
	prov, ext := render.NewPoolRef("", "", "prov"), render.NewPoolRef("", "", "ext")
	tests := []struct {
		name      string
		given     []poolAnswer
		wantState poolState
		wantMsg   string
	}{
		{name: "no pools", wantState: poolReady},
		{name: "all given", given: []poolAnswer{{pool: prov, state: poolReady}, {pool: ext, state: poolReady}}, wantState: poolReady},
		{
			name:      "one still allocating",
			given:     []poolAnswer{{pool: prov, state: poolReady}, {pool: ext, state: poolWaiting, message: "IPClaim d-ext has no address yet"}},
			wantState: poolWaiting,
			wantMsg:   "waiting for addresses: IPClaim d-ext has no address yet",
		},
		{
			name: "an exhausted pool wins over a wait: someone must act",
			given: []poolAnswer{
				{pool: prov, state: poolWaiting, message: "IPClaim d-prov has no address yet"},
				{pool: ext, state: poolExhausted, message: "IPClaim d-ext: pool ext is full"},
			},
			wantState: poolExhausted,
			wantMsg:   "no free address: IPClaim d-ext: pool ext is full; add addresses to the pool or release some (retried as soon as the pool changes)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			state, msg := addressesSummary(tt.given)
			g.Expect(state).To(Equal(tt.wantState))
			g.Expect(msg).To(Equal(tt.wantMsg))
		})
	}
}

func TestUnanswered(t *testing.T) {
	pool := render.NewPoolRef("", "", "prov")
	full := "pool prov has 10 addresses, all in use"
	tests := []struct {
		name      string
		conds     []metav1.Condition
		wantState poolState
		wantMsg   string
	}{
		{name: "not looked at yet", wantState: poolWaiting, wantMsg: "IPClaim c has no address yet"},
		{
			name:      "exhausted",
			conds:     []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "PoolExhausted", Message: full}},
			wantState: poolExhausted, wantMsg: "IPClaim c: " + full,
		},
		{
			name:      "another refusal is a wait with the IPAM controller's words",
			conds:     []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "PoolNotFound", Message: "IPPool prov not found"}},
			wantState: poolWaiting, wantMsg: "IPClaim c: IPPool prov not found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			a := unanswered(pool, "IPClaim", "c", tt.conds, nil)
			g.Expect(a.state).To(Equal(tt.wantState))
			g.Expect(a.message).To(Equal(tt.wantMsg))
		})
	}
}

func TestSecrets(t *testing.T) {
	data := &infrav1.Metal3Data{
		ObjectMeta: metav1.ObjectMeta{Name: "workers-3", Namespace: "metal3", UID: "uid-1"},
		Spec:       infrav1.Metal3DataSpec{Index: 3},
	}
	tests := []struct {
		name      string
		out       output
		wantNames []string
	}{
		{name: "both parts", out: output{metaData: []byte("a: b\n"), networkData: []byte("links: []\n")}, wantNames: []string{"m-metadata-3", "m-networkdata-3"}},
		{name: "a template without networkData writes no networkData Secret", out: output{metaData: []byte("a: b\n")}, wantNames: []string{"m-metadata-3"}},
		{name: "nothing to write", wantNames: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			list := secrets(data, "m", "cluster-a", tt.out)
			var names []string
			for _, s := range list {
				names = append(names, s.Name)
				g.Expect(s.Namespace).To(Equal("metal3"))
				g.Expect(s.Type).To(Equal(corev1.SecretType("infrastructure.cluster.x-k8s.io/secret")))
				// The cluster, and BMO's label, which the manager's Secret cache selects on.
				g.Expect(s.Labels).To(Equal(map[string]string{"cluster.x-k8s.io/cluster-name": "cluster-a", "environment.metal3.io": "baremetal"}))
				g.Expect(metav1.GetControllerOf(s).UID).To(BeEquivalentTo("uid-1"))
			}
			g.Expect(names).To(Equal(tt.wantNames))
			if len(list) > 0 {
				g.Expect(list[0].Data).To(Equal(map[string][]byte{"metaData": tt.out.metaData}))
			}
		})
	}
}

func TestOutputHash(t *testing.T) {
	g := NewWithT(t)
	a := output{metaData: []byte("ab"), networkData: []byte("c")}
	g.Expect(a.hash()).To(Equal(output{metaData: []byte("ab"), networkData: []byte("c")}.hash()))
	g.Expect(a.hash()).NotTo(Equal(output{metaData: []byte("a"), networkData: []byte("bc")}.hash()), "moving bytes between the parts changes the digest")
	g.Expect(a.hash()).NotTo(Equal(output{metaData: []byte("ab"), networkData: []byte("d")}.hash()))
}
