package openconfig

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/metalwire/metalwire/pkg/fabric"
)

// RFC 7951 JSON names a node "module:name" where its module changes; targets differ in where
// they write the module, so names are read without it.
func unqualify(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if _, name, ok := strings.Cut(k, ":"); ok {
				k = name
			}
			out[k] = unqualify(x)
		}
		return out
	case []any:
		for i := range t {
			t[i] = unqualify(t[i])
		}
	}
	return v
}

// decode reads a JSON_IETF value without module names, descending into wrap when the target
// wrapped the container in its own name.
func decode(raw []byte, wrap string, out any) error {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	v = unqualify(v)
	if m, ok := v.(map[string]any); ok && len(m) == 1 && m[wrap] != nil {
		v = m[wrap]
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

type switchedVLAN struct {
	Mode   string            `json:"interface-mode"`
	Access int               `json:"access-vlan"`
	Native int               `json:"native-vlan"`
	Trunk  []json.RawMessage `json:"trunk-vlans"`
}

// ocInterface is an interface of /interfaces as metalwire reads it.
type ocInterface struct {
	Name   string `json:"name"`
	Config struct {
		Enabled *bool  `json:"enabled"`
		Type    string `json:"type"`
	} `json:"config"`
	Ethernet struct {
		Config struct {
			AggregateID string `json:"aggregate-id"`
		} `json:"config"`
		SwitchedVLAN struct {
			Config *switchedVLAN `json:"config"`
		} `json:"switched-vlan"`
	} `json:"ethernet"`
	Aggregation *struct {
		Config struct {
			LAGType string `json:"lag-type"`
		} `json:"config"`
		SwitchedVLAN struct {
			Config *switchedVLAN `json:"config"`
		} `json:"switched-vlan"`
	} `json:"aggregation"`
}

// isAggregate says whether the interface is an aggregate (type ieee8023adLag, written with or
// without its module, or an aggregation container).
func (i ocInterface) isAggregate() bool {
	_, t, ok := strings.Cut(i.Config.Type, ":")
	if !ok {
		t = i.Config.Type
	}
	return t == "ieee8023adLag" || i.Aggregation != nil
}

// port is the interface's switching configuration as a fabric port (an aggregate's from its
// aggregation/switched-vlan) and its administrative state.
func (i ocInterface) port() (fabric.Port, error) {
	p := fabric.Port{Name: i.Name}
	c := i.Ethernet.SwitchedVLAN.Config
	if i.Aggregation != nil {
		c = i.Aggregation.SwitchedVLAN.Config
	}
	if c != nil {
		switch c.Mode {
		case "ACCESS":
			p.Mode, p.VLAN = fabric.ModeAccess, c.Access
		case "TRUNK":
			trunk, err := trunkVLANs(c.Trunk)
			if err != nil {
				return p, fmt.Errorf("interface %s: %w", i.Name, err)
			}
			p.Mode, p.VLAN, p.Trunk = fabric.ModeTrunk, c.Native, trunk
		}
	}
	p.Down = i.Config.Enabled != nil && !*i.Config.Enabled
	return p, nil
}

// tree is what a Get read: the interfaces by name, the VLANs, and the LACP settings of the
// aggregates by aggregate name.
type tree struct {
	ifaces map[string]ocInterface
	vlans  []fabric.VLAN
	lacp   map[string]lacpConfig
}

// parseTree reads /interfaces, the default network instance's /vlans and /lacp.
func parseTree(ifacesJSON, vlansJSON, lacpJSON []byte) (tree, error) {
	var ifaces struct {
		Interface []ocInterface `json:"interface"`
	}
	if err := decode(ifacesJSON, "interfaces", &ifaces); err != nil {
		return tree{}, fmt.Errorf("/interfaces: %w", err)
	}
	var vlans struct {
		VLAN []struct {
			ID     int `json:"vlan-id"`
			Config struct {
				ID   int    `json:"vlan-id"`
				Name string `json:"name"`
			} `json:"config"`
		} `json:"vlan"`
	}
	if err := decode(vlansJSON, "vlans", &vlans); err != nil {
		return tree{}, fmt.Errorf("/network-instances/network-instance[name=default]/vlans: %w", err)
	}
	lacp, err := parseLACP(lacpJSON)
	if err != nil {
		return tree{}, err
	}
	t := tree{ifaces: map[string]ocInterface{}, lacp: lacp}
	for _, v := range vlans.VLAN {
		t.vlans = append(t.vlans, fabric.VLAN{ID: max(v.ID, v.Config.ID), Name: v.Config.Name})
	}
	slices.SortFunc(t.vlans, func(a, b fabric.VLAN) int { return a.ID - b.ID })
	for _, i := range ifaces.Interface {
		t.ifaces[i.Name] = i
	}
	return t, nil
}

// state is the fabric state of the named ports and bonds (bonds where the endpoint declares
// aggregates: bondsOf).
func (t tree) state(ep fabric.Endpoint, names []string) (fabric.State, error) {
	st := fabric.State{VLANs: t.vlans, Ports: map[string]fabric.Port{}}
	for _, n := range names {
		i, ok := t.ifaces[n]
		if !ok {
			continue
		}
		p, err := i.port()
		if err != nil {
			return fabric.State{}, err
		}
		st.Ports[n] = p
	}
	lags, err := t.bondsOf(ep, names)
	if err != nil {
		return fabric.State{}, err
	}
	st.LAGs = lags
	return st, nil
}

// trunkVLANs reads trunk-vlans: ids, or ranges written "first..last".
func trunkVLANs(raw []json.RawMessage) ([]int, error) {
	var out []int
	for _, r := range raw {
		var n int
		if json.Unmarshal(r, &n) == nil {
			out = append(out, n)
			continue
		}
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return nil, fmt.Errorf("trunk-vlans entry %s is neither an id nor a range", r)
		}
		a, b, isRange := strings.Cut(s, "..")
		first, err1 := strconv.Atoi(a)
		last, err2 := strconv.Atoi(b)
		if !isRange {
			last, err2 = first, nil
		}
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("trunk-vlans entry %q is neither an id nor a range", s)
		}
		for v := first; v <= last; v++ {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
