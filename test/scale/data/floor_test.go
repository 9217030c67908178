package data

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/metal3data"
	"github.com/metalwire/metalwire/internal/testenv"
	"github.com/metalwire/metalwire/pkg/render"
	"github.com/metalwire/metalwire/test/scale/floorwatch"
	"github.com/metalwire/metalwire/test/scale/measure"
)

// floorWorkers is how many goroutines make a machine's writes once its claim exists: more than
// the manager's controllers run at once, so that the floor is the API server's, not ours.
const floorWorkers = 32

// floorResult is the floor of a size: the writes the contract requires, made with no controller.
type floorResult struct {
	took   time.Duration
	server time.Duration // the API server's and etcd's CPU over the machine's cores
	writes measure.Writes
	bytes  measure.Writes // watch events' bytes by resource
	// conversions are the conversion webhook's calls (measure.OnFreshServer).
	conversions measure.Writes
	// checks are the API server's cache consistency checks in the same time
	// (measure.CacheChecks).
	checks measure.Writes
	load   string
	shapes shapes // the fields of its objects
}

// floor makes, for n machines, exactly the writes data templating requires and nothing else:
// the writers create the claims (the machine controller's part); as each is created, one of
// floorWorkers goroutines creates its Metal3Data, two IPClaims, their two IPAddresses and
// statuses, the two Secrets, and writes the Metal3Data's and the claim's status. No cache, no
// watch, no reconcile: no controller making the same writes on this machine can be faster than
// this, and the API server's CPU for them is the floor of any controller's.
func floor(t *testing.T, e *testenv.Env, n int, watched bool) floorResult {
	t.Helper()
	ctx := context.Background()
	f := fixture{c: e.Client, ns: fmt.Sprintf("floor-%d", n)}
	tmpl, err := f.base(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pools := map[string]*ipamv1.IPPool{}
	for _, name := range []string{"prov", "ext"} {
		pools[name] = &ipamv1.IPPool{}
		if err := e.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, pools[name]); err != nil {
			t.Fatal(err)
		}
	}
	m3ms := f.machines(t, n)
	if watched {
		// Stopped before the API server is: open watches hold its shutdown up.
		defer watchLikeAController(ctx, t, e, f.ns)()
	}
	before, err := measure.ReadMetrics(ctx, e.Config)
	if err != nil {
		t.Fatal(err)
	}
	var next atomic.Int32
	work := make(chan *infrav1.Metal3DataClaim, n)
	done := make(chan error, 1)
	busy := measure.MachineBusy()
	split := measure.CPUSplit(0)
	profiled := measure.ProfileAPIServer(ctx, t, e.Config, os.Getenv("BENCH_DATA_FLOOR_APISERVER_PROFILE"), envInts(t, "BENCH_DATA_APISERVER_PROFILE_SECONDS", []int{60})[0])
	defer profiled()
	start := time.Now()
	go func() {
		done <- parallelErr(n, floorWorkers, func(int) error {
			return f.renderByHand(ctx, tmpl, pools, <-work, next.Add(1)-1)
		})
	}()
	parallel(t, n, func(i int) error {
		c, err := f.claim(ctx, m3ms[i])
		work <- c
		return err
	})
	if err := <-done; err != nil {
		t.Fatalf("making the required writes: %v", err)
	}
	took := time.Since(start)
	used := split()
	after, err := measure.ReadMetrics(ctx, e.Config)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("  (floor, %d machines: machine CPU %.0f%% busy, load %s; CPU used: %s)\n", n, busy(), measure.LoadAverage(), used)
	sampled, err := sampleShapes(ctx, e.Client, f.ns)
	if err != nil {
		t.Fatal(err)
	}
	return floorResult{shapes: sampled, took: took, server: used.Server() / time.Duration(numCPU()), writes: after.Writes().Minus(before.Writes()), bytes: after.WatchBytes().Minus(before.WatchBytes()),
		conversions: after.Conversions().Minus(before.Conversions()), checks: after.ConsistencyChecks().Minus(before.ConsistencyChecks()), load: measure.LoadAverage()}
}

// renderByHand makes the eleven writes that follow a claim's creation, with the objects the
// controllers write: the same names, labels, owners, references, conditions and annotations
// (sameShape compares them with a run's after each size), so that the API server's work for each
// write is the manager's. pools are the template's IPPools by name.
func (f fixture) renderByHand(ctx context.Context, tmpl *infrav1.Metal3DataTemplate, pools map[string]*ipamv1.IPPool, claim *infrav1.Metal3DataClaim, index int32) error {
	machine := claim.Name
	cluster := map[string]string{clusterv1.ClusterNameLabel: tmpl.Spec.ClusterName}
	now := metav1.Now()
	ready := func(typ, reason, message string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: 1, LastTransitionTime: now}
	}
	owners := []metav1.OwnerReference{{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3DataClaim", Name: claim.Name, UID: claim.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	for _, o := range claim.OwnerReferences { // the Metal3Machine, as CAPM3 adds it
		owners = append(owners, metav1.OwnerReference{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: o.UID, Controller: ptr.To(false)})
	}
	data := &infrav1.Metal3Data{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: f.ns, Name: infrav1.DataName(tmpl.Name, index), Labels: cluster,
			Finalizers:      []string{infrav1.DataFinalizer},
			OwnerReferences: owners,
		},
		Spec: infrav1.Metal3DataSpec{
			Index:       ptr.To(index),
			Claim:       corev1.ObjectReference{Name: claim.Name, Namespace: f.ns},
			Template:    corev1.ObjectReference{Name: tmpl.Name, Namespace: f.ns},
			MetaData:    &corev1.SecretReference{Name: infrav1.MetaDataSecretName(machine, index), Namespace: f.ns},
			NetworkData: &corev1.SecretReference{Name: infrav1.NetworkDataSecretName(machine, index), Namespace: f.ns},
		},
	}
	if err := f.c.Create(ctx, data); err != nil {
		return err
	}
	owner := []metav1.OwnerReference{{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Data", Name: data.Name, UID: data.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	poolRef := func(name string) corev1.ObjectReference {
		return corev1.ObjectReference{APIVersion: ipamv1.GroupVersion.String(), Kind: "IPPool", Name: name, Namespace: f.ns}
	}
	for p, name := range []string{"prov", "ext"} {
		pool := pools[name]
		c := &ipamv1.IPClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: data.Name + "-" + name, Labels: cluster, OwnerReferences: owner},
			Spec:       ipamv1.IPClaimSpec{Pool: poolRef(name)},
		}
		if err := f.c.Create(ctx, c); err != nil {
			return err
		}
		ip := fmt.Sprintf("10.%d.%d.%d", 10*(p+1), (index+2)/256, (index+2)%256)
		a := &ipamv1.IPAddress{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: f.ns, Name: ipamv1.IPAddressName(name, ip), Labels: cluster,
				OwnerReferences: []metav1.OwnerReference{
					{APIVersion: ipamv1.GroupVersion.String(), Kind: "IPClaim", Name: c.Name, UID: c.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)},
					{APIVersion: ipamv1.GroupVersion.String(), Kind: "IPPool", Name: name, UID: pool.UID},
				},
			},
			Spec: ipamv1.IPAddressSpec{
				Claim:   corev1.ObjectReference{APIVersion: ipamv1.GroupVersion.String(), Kind: "IPClaim", Name: c.Name, Namespace: f.ns},
				Pool:    poolRef(name),
				Address: ipamv1.IPAddressStr(ip), Prefix: 16, Gateway: pool.Spec.Gateway,
			},
		}
		if err := f.c.Create(ctx, a); err != nil {
			return err
		}
		c.Status.Address = &corev1.ObjectReference{Name: a.Name, Namespace: f.ns}
		c.Status.Conditions = []metav1.Condition{ready(ipamv1.ReadyCondition, ipamv1.AllocatedReason, "holds IPAddress "+a.Name)}
		if err := f.c.Status().Update(ctx, c); err != nil {
			return err
		}
	}
	// The keys, and about the sizes, of what the bench's template renders: meta-data, and
	// network data beside its os-net-config form.
	for _, s := range []struct {
		name string
		data map[string][]byte
	}{
		{data.Spec.MetaData.Name, map[string][]byte{infrav1.DataSecretMetaDataKey: filler(120)}},
		{data.Spec.NetworkData.Name, map[string][]byte{infrav1.DataSecretNetworkDataKey: filler(500),
			render.OSNetConfigKey: filler(276), render.OSNetConfigMappingKey: filler(22)}},
	} {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: s.name, OwnerReferences: owner,
				Labels: map[string]string{clusterv1.ClusterNameLabel: tmpl.Spec.ClusterName, infrav1.BMOEnvironmentLabel: infrav1.BMOEnvironmentLabelValue,
					infrav1.DataSecretRenderedLabel: infrav1.DataSecretRenderedLabelValue},
				Annotations: map[string]string{metal3data.RenderedHashAnnotation: strings.Repeat("0", 64)}},
			Type: infrav1.DataSecretType,
			Data: s.data,
		}
		if err := f.c.Create(ctx, secret); err != nil {
			return err
		}
	}
	data.Status.Ready = true
	data.Status.Conditions = []metav1.Condition{
		ready(infrav1.DataIPAddressesReadyCondition, infrav1.DataRenderedReason, ""),
		ready(infrav1.DataSecretsReadyCondition, infrav1.DataRenderedReason, ""),
		ready(infrav1.DataReadyCondition, infrav1.DataRenderedReason, ""),
	}
	data.Status.LastUpdated = &now
	if err := f.c.Status().Update(ctx, data); err != nil {
		return err
	}
	claim.Status.RenderedData = &corev1.ObjectReference{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Data", Name: data.Name, Namespace: f.ns, UID: data.UID}
	claim.Status.Conditions = []metav1.Condition{ready(infrav1.DataClaimReadyCondition, infrav1.DataClaimDataReadyReason, "")}
	return f.c.Status().Update(ctx, claim)
}

func filler(n int) []byte { return []byte(strings.Repeat("x", n)) }

// watchLikeAController holds what a controller that has to learn of every write of the data path
// holds (floorwatch.LikeAController): an informer on each kind the floor writes, the Secrets as
// metadata only.
func watchLikeAController(ctx context.Context, t *testing.T, e *testenv.Env, ns string) (stop func()) {
	t.Helper()
	secrets := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
	return floorwatch.LikeAController(ctx, t, e, ns, &infrav1.Metal3DataClaim{}, &infrav1.Metal3Data{}, &infrav1.Metal3DataTemplate{},
		&ipamv1.IPClaim{}, &ipamv1.IPAddress{}, &ipamv1.IPPool{}, secrets)
}
