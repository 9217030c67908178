package metalfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"time"
)

// handle answers one authenticated, valid request; a.mu is held.
func (a *API) handle(rec *recorder, r *http.Request, path string, params map[string]string, body []byte) {
	id := params["id"]
	switch {
	case path == "/projects/{id}" && r.Method == http.MethodGet:
		if id != a.Project {
			rec.refuse(http.StatusNotFound, "Not found")
			return
		}
		rec.reply(http.StatusOK, map[string]any{"id": a.Project, "name": "metalwire-test"})
		return
	case path == "/projects/{id}/virtual-networks" && r.Method == http.MethodGet:
		if id != a.Project {
			rec.refuse(http.StatusNotFound, "Not found")
			return
		}
		metro := r.URL.Query().Get("metro")
		list := []any{}
		for _, v := range a.vns {
			if metro == "" || metro == v.metro {
				list = append(list, map[string]any{"id": v.id, "vxlan": v.vxlan, "metro_code": v.metro, "description": fmt.Sprintf("vlan %d", v.vxlan)})
			}
		}
		rec.reply(http.StatusOK, map[string]any{"virtual_networks": list})
		return
	case path == "/devices/{id}/events" && r.Method == http.MethodGet:
		d := a.devices[id]
		if d == nil {
			rec.refuse(http.StatusNotFound, "Not found")
			return
		}
		d.eventReads++
		perPage := len(d.events)
		if n, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && n > 0 {
			perPage = min(n, perPage)
		}
		list := []any{}
		for i := len(d.events) - 1; i >= 0 && len(list) < perPage; i-- { // newest first
			e := d.events[i]
			list = append(list, map[string]any{"id": e.id, "type": e.typ, "state": e.state, "body": e.body, "interpolated": e.body,
				"created_at": e.at.Format(time.RFC3339), "href": "/metal/v1/events/" + e.id,
				"relationships": []any{map[string]any{"href": "/metal/v1/devices/" + d.ID}}})
		}
		rec.reply(http.StatusOK, map[string]any{"events": list, "meta": map[string]any{"total": len(d.events), "current_page": 1, "last_page": 1}})
		return
	case path == "/devices/{id}" && r.Method == http.MethodGet:
		d := a.devices[id]
		if d == nil {
			rec.refuse(http.StatusNotFound, "Not found")
			return
		}
		ports := []any{}
		for _, name := range []string{"bond0", "eth0", "eth1"} {
			ports = append(ports, a.portJSON(d.Ports[name]))
		}
		rec.reply(http.StatusOK, map[string]any{"id": d.ID, "hostname": d.Hostname, "network_ports": ports,
			"metro": map[string]any{"code": d.Metro}})
		return
	}
	p := a.ports[id]
	if p == nil {
		rec.refuse(http.StatusNotFound, "Not found")
		return
	}
	switch path {
	case "/ports/{id}":
		rec.reply(http.StatusOK, a.portJSON(p))
	case "/ports/{id}/bond":
		a.calls = append(a.calls, "bond "+p.Name+bulk(r, "bulk_enable"))
		a.bond(rec, p, r.URL.Query().Get("bulk_enable") == "true")
	case "/ports/{id}/disbond":
		a.calls = append(a.calls, "disbond "+p.Name+bulk(r, "bulk_disable"))
		a.disbond(rec, p, r.URL.Query().Get("bulk_disable") == "true")
	case "/ports/{id}/convert/layer-2":
		a.calls = append(a.calls, "convert/layer-2 "+p.Name)
		a.convert(rec, p, "layer2-bonded")
	case "/ports/{id}/convert/layer-3":
		a.calls = append(a.calls, "convert/layer-3 "+p.Name)
		a.convert(rec, p, "layer3")
	case "/ports/{id}/vlan-assignments/batches":
		if r.Method == http.MethodGet {
			list := []any{}
			for _, bid := range a.order {
				if b := a.batches[bid]; b.port == p.ID {
					a.advance(b)
					list = append(list, a.batchJSON(b))
				}
			}
			rec.reply(http.StatusOK, map[string]any{"batches": list})
			return
		}
		a.createBatch(rec, p, body)
	case "/ports/{id}/vlan-assignments/batches/{batch_id}":
		b := a.batches[params["batch_id"]]
		if b == nil || b.port != p.ID {
			rec.refuse(http.StatusNotFound, "Not found")
			return
		}
		a.advance(b)
		rec.reply(http.StatusOK, a.batchJSON(b))
	default:
		a.t.Errorf("Metal API fake: %s %s is in the API description but the fake does not serve it", r.Method, path)
		rec.refuse(http.StatusNotFound, "Not found")
	}
}

func bulk(r *http.Request, param string) string {
	if r.URL.Query().Get(param) == "true" {
		return " (" + param + ")"
	}
	return ""
}

func (a *API) bond(rec *recorder, p *Port, bulk bool) {
	d := p.device
	members := []*Port{p}
	if bulk || p.Name == "bond0" {
		members = []*Port{d.Ports["eth0"], d.Ports["eth1"]}
	}
	for _, m := range members {
		if len(m.VLANs) > 0 {
			rec.refuse(http.StatusUnprocessableEntity, "Port %s has virtual networks assigned; unassign them before bonding", m.Name)
			return
		}
	}
	switch {
	case d.Type == "hybrid" && p.Name == "eth1" && !bulk:
		d.Type = "layer3"
	case d.Type == "layer2-individual" && (bulk || p.Name == "bond0"):
		d.Type = "layer2-bonded"
	default:
		rec.refuse(http.StatusUnprocessableEntity, "Port %s cannot be bonded while the device is %s", p.Name, d.Type)
		return
	}
	for _, m := range members {
		m.Bonded = true
	}
	rec.reply(http.StatusOK, a.portJSON(p))
}

func (a *API) disbond(rec *recorder, p *Port, bulk bool) {
	d := p.device
	switch {
	case len(d.Ports["bond0"].VLANs) > 0:
		rec.refuse(http.StatusUnprocessableEntity, "bond0 has virtual networks assigned; unassign them before disbonding")
		return
	case d.Type == "layer3" && p.Name == "eth1" && !bulk:
		d.Type = "hybrid"
		p.Bonded = false
	case d.Type == "layer2-bonded" && bulk:
		d.Type = "layer2-individual"
		d.Ports["eth0"].Bonded, d.Ports["eth1"].Bonded = false, false
	default:
		rec.refuse(http.StatusUnprocessableEntity, "Port %s cannot be disbonded while the device is %s", p.Name, d.Type)
		return
	}
	rec.reply(http.StatusOK, a.portJSON(p))
}

func (a *API) convert(rec *recorder, p *Port, to string) {
	d := p.device
	if p.Name != "bond0" {
		rec.refuse(http.StatusUnprocessableEntity, "Only a bond port can be converted")
		return
	}
	for _, m := range d.Ports {
		if len(m.VLANs) > 0 {
			rec.refuse(http.StatusUnprocessableEntity, "Port %s has virtual networks assigned; VLANs must first be unassigned", m.Name)
			return
		}
	}
	switch {
	case to == "layer2-bonded" && d.Type == "layer3":
	case to == "layer3" && d.Type == "layer2-bonded":
	default:
		rec.refuse(http.StatusUnprocessableEntity, "Cannot convert a %s device to %s", d.Type, to)
		return
	}
	d.Type = to
	rec.reply(http.StatusOK, a.portJSON(p))
}

// canCarry says whether a port may carry VLANs now.
func canCarry(p *Port) bool {
	switch p.device.Type {
	case "layer3", "hybrid-bonded", "layer2-bonded":
		return p.Name == "bond0"
	case "hybrid":
		return p.Name == "eth1"
	case "layer2-individual":
		return p.Name != "bond0"
	}
	return false
}

func (a *API) createBatch(rec *recorder, p *Port, body []byte) {
	var in struct {
		VLANAssignments []struct {
			VLAN   string `json:"vlan"`
			State  string `json:"state"`
			Native bool   `json:"native"`
		} `json:"vlan_assignments"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		rec.refuse(http.StatusUnprocessableEntity, "invalid body: %v", err)
		return
	}
	if a.behind != nil && a.behind.port == p.ID {
		// Another client's batch completes just before this request arrives.
		a.complete(&batch{port: p.ID, items: []item{a.behind.item}})
		a.behind = nil
	}
	for _, bid := range a.order {
		if b := a.batches[bid]; b.port == p.ID && (b.state == "queued" || b.state == "in_progress") {
			rec.refuse(http.StatusUnprocessableEntity, "Port %s has a VLAN assignment batch in progress", p.Name)
			return
		}
	}
	if !canCarry(p) {
		rec.refuse(http.StatusUnprocessableEntity, "Port %s cannot carry virtual networks while the device is %s", p.Name, p.device.Type)
		return
	}
	b := &batch{id: a.uuid(), port: p.ID, state: "queued"}
	for _, v := range in.VLANAssignments {
		n, err := strconv.Atoi(v.VLAN)
		if err != nil || !a.vxlanIn(n, p.device.Metro) {
			rec.refuse(http.StatusUnprocessableEntity, "Virtual network %s was not found in metro %s", v.VLAN, p.device.Metro)
			return
		}
		on := slices.Contains(p.VLANs, n)
		switch {
		case v.State == "assigned" && on && v.Native == (p.Native == n):
			rec.refuse(http.StatusUnprocessableEntity, "Virtual network %d is already assigned to port %s", n, p.Name)
			return
		case v.State == "unassigned" && !on:
			rec.refuse(http.StatusUnprocessableEntity, "Virtual network %d is not assigned to port %s", n, p.Name)
			return
		case v.Native && (p.device.Type == "layer3" || p.device.Type == "hybrid-bonded"):
			rec.refuse(http.StatusUnprocessableEntity, "A native virtual network needs a layer 2 port; port %s is %s", p.Name, p.device.Type)
			return
		}
		b.items = append(b.items, item{vlan: n, assigned: v.State == "assigned", native: v.Native})
	}
	b.fail, a.failMsg = a.failMsg, ""
	a.batches[b.id] = b
	a.order = append(a.order, b.id)
	a.created++
	a.calls = append(a.calls, "batch "+p.Name+describe(b.items))
	rec.reply(http.StatusCreated, a.batchJSON(b))
}

func describe(items []item) string {
	out := ""
	for _, it := range items {
		state := "unassigned"
		if it.assigned {
			state = "assigned"
		}
		out += fmt.Sprintf(" %d=%s", it.vlan, state)
		if it.native {
			out += "(native)"
		}
	}
	return out
}

func (a *API) vxlanIn(n int, metro string) bool {
	for _, v := range a.vns {
		if v.vxlan == n && v.metro == metro {
			return true
		}
	}
	return false
}

// advance moves a batch one state on each read: queued -> in_progress -> completed or failed.
func (a *API) advance(b *batch) {
	b.reads++
	switch {
	case b.state == "queued":
		b.state = "in_progress"
	case b.state == "in_progress" && a.hold:
	case b.state == "in_progress" && b.fail != "":
		b.state, b.errs = "failed", []string{b.fail}
	case b.state == "in_progress":
		b.state = "completed"
		a.complete(b)
	}
}

func (a *API) complete(b *batch) {
	p := a.ports[b.port]
	for _, it := range b.items {
		switch {
		case it.assigned:
			if !slices.Contains(p.VLANs, it.vlan) {
				p.VLANs = append(p.VLANs, it.vlan)
				sort.Ints(p.VLANs)
			}
			if it.native {
				p.Native = it.vlan
			} else if p.Native == it.vlan {
				p.Native = 0
			}
		default:
			p.VLANs = slices.DeleteFunc(p.VLANs, func(v int) bool { return v == it.vlan })
			if p.Native == it.vlan {
				p.Native = 0
			}
		}
	}
	d := p.device
	switch {
	case d.Type == "layer3" && len(d.Ports["bond0"].VLANs) > 0:
		d.Type = "hybrid-bonded"
	case d.Type == "hybrid-bonded" && len(d.Ports["bond0"].VLANs) == 0:
		d.Type = "layer3"
	}
}

func (a *API) vnJSON(vxlan int, metro string) map[string]any {
	for _, v := range a.vns {
		if v.vxlan == vxlan && v.metro == metro {
			return map[string]any{"id": v.id, "vxlan": v.vxlan, "metro_code": v.metro}
		}
	}
	return map[string]any{"vxlan": vxlan}
}

func (a *API) portJSON(p *Port) map[string]any {
	typ := "NetworkPort"
	if p.Name == "bond0" {
		typ = "NetworkBondPort"
	}
	vns := make([]any, 0, len(p.VLANs))
	for _, v := range p.VLANs {
		vns = append(vns, a.vnJSON(v, p.device.Metro))
	}
	out := map[string]any{"id": p.ID, "name": p.Name, "type": typ, "network_type": p.device.Type,
		"data": map[string]any{"bonded": p.Bonded}, "virtual_networks": vns,
		"disbond_operation_supported": true, "href": "/metal/v1/ports/" + p.ID}
	if p.Name != "bond0" {
		out["bond"] = map[string]any{"id": p.device.Ports["bond0"].ID, "name": "bond0"}
		out["data"].(map[string]any)["mac"] = fmt.Sprintf("b8:ce:f6:00:%02x:%02x", len(p.ID)%256, p.Name[3])
	}
	if p.Native != 0 {
		out["native_virtual_network"] = a.vnJSON(p.Native, p.device.Metro)
	}
	return out
}

func (a *API) batchJSON(b *batch) map[string]any {
	items := make([]any, 0, len(b.items))
	for _, it := range b.items {
		state := "unassigned"
		if it.assigned {
			state = "assigned"
		}
		items = append(items, map[string]any{"id": a.uuidFor(b.id, it.vlan), "vlan": it.vlan, "state": state, "native": it.native})
	}
	out := map[string]any{"id": b.id, "state": b.state, "quantity": len(b.items), "vlan_assignments": items,
		"created_at": time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339),
		"project":    map[string]any{"href": "/metal/v1/projects/" + a.Project}}
	if len(b.errs) > 0 {
		out["error_messages"] = b.errs
	}
	return out
}

func (a *API) uuidFor(batchID string, vlan int) string {
	return fmt.Sprintf("%s%04d", batchID[:len(batchID)-4], vlan%10000)
}
