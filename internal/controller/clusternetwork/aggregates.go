package clusternetwork

import (
	"cmp"
	"slices"

	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// aggregatesOf is the range switch sw's bonds are numbered from, as its driver numbers them
// (SONiC's prefix is PortChannel whatever is set); nil when it declares none.
func aggregatesOf(sw *netv1.Switch) *fabric.Aggregates {
	if sw == nil || sw.Aggregates == nil {
		return nil
	}
	a := &fabric.Aggregates{First: int(sw.Aggregates.First), Last: int(sw.Aggregates.Last), Prefix: sw.Aggregates.Prefix}
	if sw.NetworkOS == netv1.NetworkOSSONiC {
		a.Prefix = "PortChannel"
	}
	return a
}

// refuseAggregateCollisions refuses, before anything is configured, a host of cn whose bond would
// take the aggregate number another bond on that switch has: two bond names landing on one
// number of a switch's declared range would fail the switch's whole batch. The numbers go, in
// this order, to the bonds the switch carries (its status record: a bond of a host that left
// keeps its number until it is removed), to the hosts configured already (by any ClusterNetwork,
// by host name), then to cn's selected hosts by host name; a host not selected is offered only if
// its bonds' numbers are free. views[i] is nics[i]'s; a refused host's view says why.
func refuseAggregateCollisions(nd *netv1.NetworkDevice, cn *netv1.ClusterNetwork, nics []netv1.NIC, views []hostView) {
	ranges := map[string]fabric.Aggregates{}
	for i := range nd.Spec.Switches {
		if a := aggregatesOf(&nd.Spec.Switches[i]); a != nil {
			ranges[nd.Spec.Switches[i].Name] = *a
		}
	}
	if len(ranges) == 0 {
		return
	}
	order := make([]int, len(nics))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(nics[a].Spec.Node, nics[b].Spec.Node), cmp.Compare(nics[a].Name, nics[b].Name))
	})
	selected := func(i int) bool { return nics[i].Labels[netv1.SelectedForLabel] == cn.Name }
	configured := func(i int) bool {
		st := nics[i].Status.ClusterNetwork
		return st != "" && (st != cn.Name || selected(i)) // not a host leaving cn: its bonds go
	}

	// Whose each bond is, to name the host of a bond the switch carries.
	owner := map[[2]string]fabric.AggregateHolder{}
	for i := range nics {
		for _, h := range slices.Concat(statusBonds(&nics[i]), wantedBonds(cn, &nics[i], views[i])) {
			owner[[2]string{h.Switch, h.Bond}] = h
		}
	}
	book := fabric.NewAggregateBook(ranges)
	for _, sw := range nd.Status.Switches {
		if _, ok := ranges[sw.Name]; !ok || sw.Removed {
			continue
		}
		for _, p := range sw.Ports {
			if p.LAG != nil {
				h, ok := owner[[2]string{sw.Name, p.Name}]
				if !ok {
					h = fabric.AggregateHolder{Switch: sw.Name, Bond: p.Name}
				}
				_ = book.Claim(h) // the switch carries it: it has the number
			}
		}
	}
	refuse := func(i int, err error) {
		views[i].misfit, views[i].lagRefused, views[i].placement, views[i].lags = err.Error(), true, nil, nil
	}
	claim := func(i int, bonds []fabric.AggregateHolder) {
		for _, h := range bonds {
			if err := book.Claim(h); err != nil {
				// A host another ClusterNetwork uses is that one's to refuse (and this one's
				// state for it says it is used).
				if selected(i) && views[i].placement != nil && (nics[i].Status.ClusterNetwork == "" || nics[i].Status.ClusterNetwork == cn.Name) {
					refuse(i, err)
				}
				return
			}
		}
	}
	for _, i := range order {
		if configured(i) {
			claim(i, statusBonds(&nics[i]))
			if selected(i) && nics[i].Status.ClusterNetwork == cn.Name {
				claim(i, wantedBonds(cn, &nics[i], views[i]))
			}
		}
	}
	for _, i := range order {
		if selected(i) && nics[i].Status.ClusterNetwork == "" {
			claim(i, wantedBonds(cn, &nics[i], views[i]))
		}
	}
	for _, i := range order {
		if nics[i].Labels[netv1.SelectedForLabel] != "" || nics[i].Status.ClusterNetwork != "" {
			continue
		}
		for _, h := range wantedBonds(cn, &nics[i], views[i]) {
			if err := book.Check(h); err != nil {
				refuse(i, err)
				break
			}
		}
	}
}

// statusBonds are the bonds a host's NIC status asks of its switches.
func statusBonds(nic *netv1.NIC) []fabric.AggregateHolder {
	var out []fabric.AggregateHolder
	for i, a := range nic.Status.NICs {
		if a == nil || a.LAG == nil || i >= len(nic.Spec.NICs) {
			continue
		}
		out = appendBond(out, fabric.AggregateHolder{Switch: nic.Spec.NICs[i].NetworkDevice.Switch.Name, Bond: a.LAG.Name, Host: nic.Spec.Node, Network: a.Network})
	}
	return out
}

// wantedBonds are the bonds cn would ask of a host's switches (v is its view).
func wantedBonds(cn *netv1.ClusterNetwork, nic *netv1.NIC, v hostView) []fabric.AggregateHolder {
	var out []fabric.AggregateHolder
	for i, l := range v.lags {
		if l == nil || i >= len(nic.Spec.NICs) {
			continue
		}
		network := ""
		for _, n := range cn.Spec.Networks {
			if fabric.LAGName(nic.Spec.Node, n.Name) == l.Name {
				network = n.Name
				break
			}
		}
		out = appendBond(out, fabric.AggregateHolder{Switch: nic.Spec.NICs[i].NetworkDevice.Switch.Name, Bond: l.Name, Host: nic.Spec.Node, Network: network})
	}
	return out
}

// appendBond adds h unless the list has that bond on that switch (a bond's cards are several).
func appendBond(list []fabric.AggregateHolder, h fabric.AggregateHolder) []fabric.AggregateHolder {
	if slices.ContainsFunc(list, func(o fabric.AggregateHolder) bool { return o.Switch == h.Switch && o.Bond == h.Bond }) {
		return list
	}
	return append(list, h)
}
