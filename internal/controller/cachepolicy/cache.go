package cachepolicy

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// ByObject narrows what the manager's cache holds. Secrets: only those labelled
// environment.metal3.io=baremetal, the label BMO's own cache selects and that metalwire puts on
// every Secret it writes (pre-provisioning network data, and BMO's BMC credentials carry it too),
// but not those a Metal3Data rendered (labelled infrav1.DataSecretRenderedLabel): of those the
// manager keeps the metadata only, in a cache of its own (NewRenderedSecrets), so neither its
// memory nor its watch carries their data. The Secrets metalwire is pointed at (a workload
// cluster's kubeconfig) are read from the API server directly (the manager's APIReader), one at
// a time, so the manager never lists or watches every Secret of the cluster.
func ByObject() map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{
		&corev1.Secret{}: {Label: fullSecretSelector()},
	}
}

// fullSecretSelector selects the Secrets the manager caches whole (transformed):
// environment.metal3.io=baremetal,!metal3data.metalwire.io/rendered.
func fullSecretSelector() labels.Selector {
	bmo, err := labels.NewRequirement(infrav1.BMOEnvironmentLabel, selection.Equals, []string{infrav1.BMOEnvironmentLabelValue})
	if err != nil {
		panic(err) // constant keys and values: valid
	}
	notRendered, err := labels.NewRequirement(infrav1.DataSecretRenderedLabel, selection.DoesNotExist, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*bmo, *notRendered)
}

// lastAppliedAnnotation is kubectl apply's copy of the whole manifest last applied: on a
// BareMetalHost or a template written with kubectl apply it is as large as the rest of the
// object, and no controller reads it.
const lastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// Transform is what the manager's cache does to every object before keeping it: it drops
// what no controller reads, so the cache holds a fraction of the bytes (the cache-footprint
// tests measure what it keeps, kind by kind):
//
//   - every kind: managedFields and kubectl's last-applied-configuration annotation;
//   - Secrets (only the labelled ones are cached whole, ByObject): every data key but
//     networkData, which the pre-provisioning template's status reads back from a host's
//     pre-provisioning Secret. The rest (BMO's BMC credentials, which carry the same label)
//     stays out of the manager's memory. A Metal3Data's Secrets are not in that cache at all:
//     their metadata is (NewRenderedSecrets, through this same transform), and their data is read
//     from the API server when it is needed;
//   - BareMetalHosts: the parts of their status no controller reads (each NIC's model and the
//     VLANs its switch port showed at inspection, the provisioning image and ID);
//   - Machines: status.nodeInfo and status.addresses, which Cluster API copies from the Node and
//     from us, and which no metalwire controller reads.
//
// What it keeps, it keeps once where thousands of objects repeat it: the strings every object of
// a kind or a cluster shares (namespace, labels, owners' kinds, conditions' reasons...) point to
// one copy (internRepeated).
//
// A transform must never drop what a controller writes back from a cached object: an Update
// sends the whole object, so a field dropped here would be erased. The manager's controllers
// update only Secrets they read from the API server (not the cache) and statuses of kinds not
// trimmed here (an IPClaim's); everything else is written with patches computed against the
// cached copy, which leave a field absent from both sides alone. Like every cache transform it
// only writes when there is something to drop: the informer may pass an object it holds again.
func Transform() toolscache.TransformFunc { return transform(true) }

// transform is Transform, with the repeated strings interned or (to measure what
// interning saves) not.
func transform(internStrings bool) toolscache.TransformFunc {
	return func(in any) (any, error) {
		obj, ok := in.(metav1.Object)
		if !ok {
			return in, nil // a tombstone: its object was transformed when it was cached
		}
		if obj.GetManagedFields() != nil {
			obj.SetManagedFields(nil)
		}
		if a := obj.GetAnnotations(); a != nil {
			if _, ok := a[lastAppliedAnnotation]; ok {
				delete(a, lastAppliedAnnotation)
				if len(a) == 0 {
					obj.SetAnnotations(nil)
				}
			}
		}
		switch o := in.(type) {
		case *corev1.Secret:
			trimSecret(o)
		case *bmov1.BareMetalHost:
			trimHost(o)
		case *clusterv1.Machine:
			trimMachine(o)
		}
		if internStrings {
			internRepeated(in)
		}
		return in, nil
	}
}

// trimSecret keeps only the networkData key of a cached Secret's data.
func trimSecret(s *corev1.Secret) {
	for k := range s.Data {
		if k != infrav1.DataSecretNetworkDataKey {
			delete(s.Data, k)
		}
	}
	if s.Data != nil && len(s.Data) == 0 {
		s.Data = nil
	}
	if s.StringData != nil { // never sent by the API server; kept out all the same
		s.StringData = nil
	}
}

// trimHost drops what no controller reads of a host's status: the controllers read each NIC's
// name, MAC, IP, speed and LLDP neighbour (rendering, switch ports, the Machine's addresses),
// the hostname, the provisioning state, the error and the operational status.
func trimHost(h *bmov1.BareMetalHost) {
	if hw := h.Status.HardwareDetails; hw != nil {
		for i := range hw.NIC {
			nic := &hw.NIC[i]
			if nic.Model != "" {
				nic.Model = ""
			}
			if nic.VLANs != nil {
				nic.VLANs = nil
			}
		}
	}
	if p := &h.Status.Provisioning; p.Image != (bmov1.Image{}) || p.ID != "" {
		p.Image, p.ID = bmov1.Image{}, ""
	}
}

// trimMachine drops what no controller reads of a Machine's status. Its conditions stay (the
// remediation controller patches OwnerRemediated against them), and so does nodeRef.
func trimMachine(m *clusterv1.Machine) {
	if m.Status.NodeInfo != nil {
		m.Status.NodeInfo = nil
	}
	if m.Status.Addresses != nil {
		m.Status.Addresses = nil
	}
}
