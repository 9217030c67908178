package poolanswer

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/metalwire/metalwire/pkg/render"
)

func TestSummary(t *testing.T) {
	prov, ext := render.NewPoolRef("", "", "prov"), render.NewPoolRef("", "", "ext")
	tests := []struct {
		name      string
		given     []Answer
		wantState State
		wantMsg   string
	}{
		{name: "no pools", wantState: Ready},
		{name: "all given", given: []Answer{{Pool: prov, State: Ready}, {Pool: ext, State: Ready}}, wantState: Ready},
		{
			name:      "one still allocating",
			given:     []Answer{{Pool: prov, State: Ready}, {Pool: ext, State: Waiting, Message: "IPClaim d-ext has no address yet"}},
			wantState: Waiting,
			wantMsg:   "waiting for addresses: IPClaim d-ext has no address yet",
		},
		{
			name: "an exhausted pool wins over a wait: someone must act",
			given: []Answer{
				{Pool: prov, State: Waiting, Message: "IPClaim d-prov has no address yet"},
				{Pool: ext, State: Exhausted, Message: "IPClaim d-ext: pool ext is full"},
			},
			wantState: Exhausted,
			wantMsg:   "no free address: IPClaim d-ext: pool ext is full; add addresses to the pool or release some (retried as soon as the pool changes)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			state, msg := Summary(tt.given)
			g.Expect(state).To(Equal(tt.wantState))
			g.Expect(msg).To(Equal(tt.wantMsg))
		})
	}
}

func TestUnanswered(t *testing.T) {
	pool := render.NewPoolRef("", "", "prov")
	full := "pool prov has 10 addresses, all in use"
	upstream := "Exhausted IP Pools: prov"
	tests := []struct {
		name         string
		conds        []metav1.Condition
		errorMessage *string
		wantState    State
		wantMsg      string
	}{
		{name: "not looked at yet", wantState: Waiting, wantMsg: "IPClaim c has no address yet"},
		{
			name:      "exhausted",
			conds:     []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "PoolExhausted", Message: full}},
			wantState: Exhausted, wantMsg: "IPClaim c: " + full,
		},
		{
			name:         "exhausted, the condition's words win over upstream's errorMessage",
			conds:        []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "PoolExhausted", Message: full}},
			errorMessage: &upstream,
			wantState:    Exhausted, wantMsg: "IPClaim c: " + full,
		},
		{
			name:         "exhausted with no words in the condition: upstream's errorMessage",
			conds:        []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "PoolExhausted"}},
			errorMessage: &upstream,
			wantState:    Exhausted, wantMsg: "IPClaim c: " + upstream,
		},
		{
			name:      "another refusal is a wait with the IPAM controller's words",
			conds:     []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "PoolNotFound", Message: "IPPool prov not found"}},
			wantState: Waiting, wantMsg: "IPClaim c: IPPool prov not found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			a := Unanswered(pool, "IPClaim", "c", tt.conds, tt.errorMessage)
			g.Expect(a.State).To(Equal(tt.wantState))
			g.Expect(a.Message).To(Equal(tt.wantMsg))
		})
	}
}

func TestAnyNotSeenAndAddresses(t *testing.T) {
	g := NewWithT(t)
	prov, ext := render.NewPoolRef("", "", "prov"), render.NewPoolRef("", "", "ext")
	answers := []Answer{
		{Pool: prov, State: Ready, Address: render.PoolAddress{Address: "10.0.0.2", Prefix: 24}},
		{Pool: ext, State: Waiting, NotSeen: true},
	}
	g.Expect(AnyNotSeen(answers)).To(BeTrue())
	g.Expect(AnyNotSeen(answers[:1])).To(BeFalse())
	g.Expect(Addresses(answers)).To(Equal(map[render.PoolRef]render.PoolAddress{prov: {Address: "10.0.0.2", Prefix: 24}}))
}
