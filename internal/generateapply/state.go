package generateapply

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/metalwire/metalwire/pkg/generate"
)

// StateLabel marks the ConfigMaps that hold a generator's address state.
const StateLabel = "metalwire.io/ip-state"

// DefaultStateName is the state ConfigMap's name when --state-configmap is not given.
func DefaultStateName(cluster string) string { return cluster + "-ip-state" }

// readState reads the state ConfigMap; a missing one is an empty state (and a nil ConfigMap).
func readState(ctx context.Context, c client.Client, key client.ObjectKey) (*corev1.ConfigMap, generate.State, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, key, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, generate.State{}, nil
		}
		return nil, nil, fmt.Errorf("reading the address state, ConfigMap %s: %w", key, err)
	}
	state, err := DecodeState(cm.Data)
	if err != nil {
		return nil, nil, fmt.Errorf("ConfigMap %s: %w; fix or remove the entry", key, err)
	}
	return cm, state, nil
}

// DecodeState reads a state ConfigMap's data: data.<network> holds `node: address` lines.
func DecodeState(data map[string]string) (generate.State, error) {
	state := generate.State{}
	for net, text := range data {
		var nodes map[string]string
		if err := yaml.Unmarshal([]byte(text), &nodes); err != nil {
			return nil, fmt.Errorf("data.%s is not `node: address` lines: %w", net, err)
		}
		state[net] = map[string]netip.Addr{}
		for node, s := range nodes {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("data.%s: %s: %q is not an IP address", net, node, s)
			}
			state[net][node] = a
		}
	}
	return state, nil
}

// EncodeState writes the state as ConfigMap data, one `node: address` line per node, sorted.
func EncodeState(state generate.State) map[string]string {
	data := map[string]string{}
	for net, nodes := range state {
		if len(nodes) == 0 {
			continue
		}
		var b strings.Builder
		for _, node := range slices.Sorted(maps.Keys(nodes)) {
			fmt.Fprintf(&b, "%s: %s\n", node, nodes[node])
		}
		data[net] = b.String()
	}
	return data
}

// writeState stores the state with a compare-and-swap: a create when the ConfigMap did not
// exist, an update carrying the resourceVersion read otherwise. It returns conflict=true when
// another writer got there first: the caller reads again and recomputes.
func writeState(ctx context.Context, c client.Client, key client.ObjectKey, read *corev1.ConfigMap, state generate.State) (conflict bool, err error) {
	if read == nil {
		cm := &corev1.ConfigMap{}
		cm.Name, cm.Namespace = key.Name, key.Namespace
		cm.Labels = map[string]string{StateLabel: ""}
		cm.Data = EncodeState(state)
		err = c.Create(ctx, cm)
		if apierrors.IsAlreadyExists(err) {
			return true, nil
		}
		return false, err
	}
	cm := read.DeepCopy()
	cm.Data = EncodeState(state)
	err = c.Update(ctx, cm) // carries read's resourceVersion: the API server refuses a stale write
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}
