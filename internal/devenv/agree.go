package devenv

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	networkv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// hostSwitchVerdicts waits (up to timeout) until every rendered Metal3Data of a host that a
// ClusterNetwork uses carries the controllers' HostSwitchMismatch verdict, and returns how many
// were checked and the disagreements ("host: message"). A Metal3Data still without a verdict
// at the end is reported as such: the check must have run for every host.
func hostSwitchVerdicts(ctx context.Context, c client.Client, ns string, timeout time.Duration) (checked int, problems []string, err error) {
	deadline := time.Now().Add(timeout)
	for {
		checked, problems, err = readVerdicts(ctx, c, ns)
		if err != nil || time.Now().After(deadline) || ctx.Err() != nil {
			return checked, problems, err
		}
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, "not checked") }) {
			return checked, problems, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func readVerdicts(ctx context.Context, c client.Client, ns string) (int, []string, error) {
	data := &infrav1.Metal3DataList{}
	if err := c.List(ctx, data, client.InNamespace(ns)); err != nil {
		return 0, nil, fmt.Errorf("listing Metal3Data: %w", err)
	}
	nics := &networkv1.NICList{}
	if err := c.List(ctx, nics, client.InNamespace(ns)); err != nil {
		return 0, nil, fmt.Errorf("listing NICs: %w", err)
	}
	selected := map[string]bool{} // host -> some ClusterNetwork uses its cards
	for _, n := range nics.Items {
		selected[n.Spec.Node] = selected[n.Spec.Node] || n.Status.ClusterNetwork != ""
	}
	checked := 0
	var problems []string
	for i := range data.Items {
		d := &data.Items[i]
		if !d.Status.Ready || d.Spec.NetworkData == nil {
			continue
		}
		m3m := &infrav1.Metal3Machine{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: d.Spec.Claim.Name}, m3m); err != nil {
			continue
		}
		_, host, set, err := infrav1.ParseHostAnnotation(m3m.Annotations[infrav1.HostAnnotation], m3m.Namespace)
		if !set || err != nil || !selected[host] {
			continue
		}
		checked++
		switch c := meta.FindStatusCondition(d.Status.Conditions, infrav1.DataHostSwitchMismatchCondition); {
		case c == nil:
			problems = append(problems, fmt.Sprintf("%s: not checked: Metal3Data %s has no %s condition", host, d.Name, infrav1.DataHostSwitchMismatchCondition))
		case c.Status == metav1.ConditionTrue:
			problems = append(problems, host+": "+c.Message)
		}
	}
	slices.Sort(problems)
	return checked, problems, nil
}
