package generateapply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/metalwire/metalwire/pkg/generate"
)

// FieldOwner is the server-side apply manager of the objects the generator applies.
const FieldOwner = "metalwire-generate"

// maxAttempts bounds the read-compute-swap loop; each conflict means another generator wrote.
const maxAttempts = 50

// Options is one run of the generator.
type Options struct {
	// File is the user's configuration; nil with Delete only.
	File *generate.File
	// Generate names the cluster, namespace, image and format.
	Generate generate.Options
	// StateName is the state ConfigMap's name (default <cluster>-ip-state).
	StateName string
	// Delete frees these nodes' addresses instead of generating.
	Delete []string
	// DryRun prints what would change and changes nothing.
	DryRun bool
	// OutDir, when set, receives one <node>.yaml per node instead of applying the objects.
	OutDir string
	// Out receives progress lines and the summary.
	Out io.Writer
}

// Summary is what a run did.
type Summary struct {
	Nodes    int
	Given    int // addresses handed out by this run
	Kept     int // addresses nodes already held
	Freed    int
	Attempts int // reads of the state until the swap succeeded
}

// Run reads the address state, allocates (or frees) against it, stores the new state with a
// compare-and-swap, retrying from the read on a conflict, and then applies or writes every
// node's objects. Addresses are stored before any object uses them, as the seed asks.
func Run(ctx context.Context, c client.Client, o Options) (*Summary, error) {
	if o.StateName == "" {
		o.StateName = DefaultStateName(o.Generate.Cluster)
	}
	key := client.ObjectKey{Namespace: o.Generate.Namespace, Name: o.StateName}
	sum := &Summary{}
	var res *generate.Result
	for {
		sum.Attempts++
		read, state, err := readState(ctx, c, key)
		if err != nil {
			return nil, err
		}
		var next generate.State
		var changes []generate.Change
		if len(o.Delete) > 0 {
			if next, changes, err = release(ctx, c, o, state); err != nil {
				return nil, err
			}
		} else {
			if res, err = o.File.Generate(state, o.Generate); err != nil {
				return nil, err
			}
			next, changes = res.State, res.Changes
		}
		for _, ch := range changes {
			if ch.Freed {
				sum.Freed++
			} else {
				sum.Given++
			}
		}
		if o.DryRun {
			for _, ch := range changes {
				fmt.Fprintf(o.Out, "would change ConfigMap %s: %s\n", key, ch)
			}
			break
		}
		if len(changes) == 0 {
			break
		}
		conflict, err := writeState(ctx, c, key, read, next)
		if err != nil {
			return nil, fmt.Errorf("writing the address state, ConfigMap %s: %w", key, err)
		}
		if !conflict {
			break
		}
		if sum.Attempts >= maxAttempts {
			return nil, fmt.Errorf("ConfigMap %s changed under this run %d times in a row; run again", key, sum.Attempts)
		}
		sum.Given, sum.Freed = 0, 0
		fmt.Fprintf(o.Out, "ConfigMap %s changed since it was read (another generator?); reading it again\n", key)
		// Jitter keeps generators that collided from colliding again in step.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(rand.IntN(50*sum.Attempts)) * time.Millisecond): //nolint:gosec // jitter, not a secret
		}
	}

	if len(o.Delete) > 0 {
		verb := "freed"
		if o.DryRun {
			verb = "would free"
		}
		fmt.Fprintf(o.Out, "%s %d address(es) of %s in ConfigMap %s\n", verb, sum.Freed, strings.Join(o.Delete, ", "), key)
		return sum, nil
	}
	if o.OutDir != "" && !o.DryRun {
		if err := os.MkdirAll(o.OutDir, 0o750); err != nil {
			return nil, err
		}
	}
	for i, n := range res.Nodes {
		sum.Nodes++
		sum.Kept += len(n.Addresses)
		var where string
		switch {
		case o.DryRun:
			where = "would apply " + objectList(n.Objects)
		case o.OutDir != "":
			path := filepath.Join(o.OutDir, n.Node.Name+".yaml")
			data, err := n.Manifests()
			if err == nil {
				err = os.WriteFile(path, data, 0o600)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: writing %s: %w", n.Node.Name, path, err)
			}
			where = "wrote " + path
		default:
			for _, obj := range n.Objects {
				if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
					return nil, fmt.Errorf("%s: applying %s %s: %w", n.Node.Name, obj.GetKind(), obj.GetName(), explainApply(err))
				}
			}
			where = "applied " + objectList(n.Objects)
		}
		fmt.Fprintf(o.Out, "[%d/%d] %s: %s; %s\n", i+1, len(res.Nodes), n.Node.Name, addressList(n.Addresses), where)
	}
	sum.Kept -= sum.Given
	prefix := ""
	if o.DryRun {
		prefix = "dry run, nothing changed: "
	}
	fmt.Fprintf(o.Out, "%s%d node(s), %d address(es) given, %d kept; state in ConfigMap %s\n", prefix, sum.Nodes, sum.Given, sum.Kept, key)
	return sum, nil
}

// release frees the nodes' addresses. A node whose Machine still exists keeps them: its host
// may still use them, and a new node given the same address would clash on the wire.
func release(ctx context.Context, c client.Client, o Options, state generate.State) (generate.State, []generate.Change, error) {
	var all []generate.Change
	for _, node := range o.Delete {
		name := o.Generate.Cluster + "-" + node
		m := &unstructured.Unstructured{}
		m.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Machine"})
		err := c.Get(ctx, client.ObjectKey{Namespace: o.Generate.Namespace, Name: name}, m)
		switch {
		case err == nil:
			return nil, nil, fmt.Errorf("--delete %s: Machine %s/%s still exists; delete it first (its host may still use the addresses), then run --delete again", node, o.Generate.Namespace, name)
		case !apierrors.IsNotFound(err) && !isNoMatch(err):
			return nil, nil, err
		}
		var changes []generate.Change
		state, changes = state.Release(node)
		if len(changes) == 0 {
			return nil, nil, fmt.Errorf("--delete %s: the node holds no address in the state; nodes holding some: %s", node, strings.Join(heldBy(state), ", "))
		}
		all = append(all, changes...)
	}
	return state, all, nil
}

func isNoMatch(err error) bool {
	return strings.Contains(err.Error(), "no matches for kind")
}

func heldBy(state generate.State) []string {
	var nodes []string
	for _, byNode := range state {
		for n := range byNode {
			if !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
	}
	slices.Sort(nodes)
	if len(nodes) == 0 {
		return []string{"none"}
	}
	return nodes
}

func objectList(objs []*unstructured.Unstructured) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = o.GetKind()
	}
	return strings.Join(parts, ", ") + " " + objs[0].GetName()
}

func addressList(addrs map[string]netip.Addr) string {
	nets := make([]string, 0, len(addrs))
	for n := range addrs {
		nets = append(nets, n)
	}
	slices.Sort(nets)
	parts := make([]string, len(nets))
	for i, n := range nets {
		parts[i] = n + " " + addrs[n].String()
	}
	return strings.Join(parts, ", ")
}

// explainApply adds the fix to the errors a user can do something about.
func explainApply(err error) error {
	if isNoMatch(err) {
		return fmt.Errorf("%w; install Cluster API and metalwire's CRDs in the cluster first", err)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) && apierrors.IsInvalid(err) {
		return fmt.Errorf("%w; check the --image-* flags", err)
	}
	return err
}
