package cachepolicy

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/pkg/intern"
)

// cacheStrings holds the canonical copies of the strings the manager's cache keeps once for
// every object: one table for the process, so every informer's objects share them.
var cacheStrings = intern.New()

// cacheLabels holds the canonical label maps: the objects of a cluster mostly carry the same
// labels, and each carries one map of them (a few hundred bytes) unless they share it. A shared
// map is never written: nothing writes a cached object, and a copy (DeepCopy) has maps of its own.
var cacheLabels = intern.NewMaps()

// internRepeated makes the strings that repeat across thousands of cached objects share one
// copy: the namespace, the apiVersion and kind, label keys and values (a cluster's name, a
// pool's, a Metal3Data's name on its claims and addresses), annotation keys, finalizers, the
// owners' apiVersion and kind, and the conditions' type, status, reason and severity; and equal
// labels maps share one map (cacheLabels). What is one object's own (its name, uid, resourceVersion, the owners' names and uids, annotation values,
// condition messages) is left as it is: interning a string nothing else shares costs a table
// entry and saves nothing.
//
// Like the rest of the transform it writes only what is not canonical yet, so an object the cache
// holds, passed again, is not written (another goroutine may be reading it): a field is assigned
// only when its bytes are not the canonical ones, and a map is rebuilt only when one of its keys
// is not canonical or one of its values is not.
func internRepeated(in any) {
	// Typed objects embed ObjectMeta and TypeMeta, whose getters return them: written in place.
	// (An unstructured object's getters return copies; the manager caches none.)
	if o, ok := in.(interface{ GetObjectMeta() metav1.Object }); ok {
		if om, ok := o.GetObjectMeta().(*metav1.ObjectMeta); ok {
			internMeta(om)
		}
	}
	if o, ok := in.(runtime.Object); ok {
		if tm, ok := o.GetObjectKind().(*metav1.TypeMeta); ok {
			cacheStrings.Intern(&tm.APIVersion)
			cacheStrings.Intern(&tm.Kind)
		}
	}
	internConditions(conditionsOf(in))
	switch o := in.(type) {
	case *clusterv1.Machine:
		cs := o.GetV1Beta1Conditions() // the Machine's own slice: its elements are written in place
		for i := range cs {
			c := &cs[i]
			intern.Field(cacheStrings, &c.Type)
			intern.Field(cacheStrings, &c.Status)
			intern.Field(cacheStrings, &c.Severity)
			cacheStrings.Intern(&c.Reason)
		}
		cacheStrings.Intern(&o.Spec.ClusterName)
		cacheStrings.Intern(&o.Spec.Version)
		cacheStrings.Intern(&o.Spec.FailureDomain)
		cacheStrings.Intern(&o.Spec.Bootstrap.ConfigRef.Kind)
		cacheStrings.Intern(&o.Spec.Bootstrap.ConfigRef.APIGroup)
		cacheStrings.Intern(&o.Spec.InfrastructureRef.Kind)
		cacheStrings.Intern(&o.Spec.InfrastructureRef.APIGroup)
	case *bmov1.BareMetalHost:
		intern.Field(cacheStrings, &o.Status.Provisioning.State)
		intern.Field(cacheStrings, &o.Status.OperationalStatus)
		cacheStrings.Intern(&o.Spec.AutomatedCleaningMode)
		internRef(o.Spec.ConsumerRef, false)
		if hw := o.Status.HardwareDetails; hw != nil {
			for i := range hw.NIC {
				cacheStrings.Intern(&hw.NIC[i].Name)
			}
		}
	case *infrav1.Metal3Machine:
		cacheStrings.Intern(&o.Spec.Image.URL)
		internPtr(o.Spec.Image.Checksum)
		internPtr(o.Spec.Image.ChecksumType)
		internPtr(o.Spec.Image.DiskFormat)
		internRef(o.Spec.DataTemplate, true)
		internSecretRef(o.Spec.UserData)
		internSecretRef(o.Spec.MetaData)
		internSecretRef(o.Spec.NetworkData)
		if o.Spec.AutomatedCleaningMode != nil {
			intern.Field(cacheStrings, o.Spec.AutomatedCleaningMode)
		}
		cacheStrings.Intern(&o.Spec.FailureDomain)
		for i := range o.Status.Addresses {
			intern.Field(cacheStrings, &o.Status.Addresses[i].Type)
		}
		internRef(o.Status.RenderedData, false)
		internSecretRef(o.Status.UserData)
		internSecretRef(o.Status.MetaData)
		internSecretRef(o.Status.NetworkData)
	case *infrav1.Metal3Data:
		internRef(&o.Spec.Template, true)
		internRef(&o.Spec.Claim, false)
		internSecretRef(o.Spec.MetaData)
		internSecretRef(o.Spec.NetworkData)
	case *infrav1.Metal3DataClaim:
		internRef(&o.Spec.Template, true)
		internRef(o.Status.RenderedData, false)
	case *ipamv1.IPClaim:
		internRef(&o.Spec.Pool, true)
		internRef(o.Status.Address, false)
	case *ipamv1.IPAddress:
		internRef(&o.Spec.Pool, true)
		internRef(&o.Spec.Claim, false)
		if o.Spec.Gateway != nil {
			intern.Field(cacheStrings, o.Spec.Gateway)
		}
		for i := range o.Spec.DNSServers {
			intern.Field(cacheStrings, &o.Spec.DNSServers[i])
		}
	}
}

// internRef interns a reference's kind, apiVersion and namespace, and its name when shared
// (a pool's, a template's: referenced by every object drawing from it), not when the referenced
// object is this one's own (its claim, its address, its consumer).
func internRef(r *corev1.ObjectReference, shared bool) {
	if r == nil {
		return
	}
	cacheStrings.Intern(&r.Kind)
	cacheStrings.Intern(&r.APIVersion)
	cacheStrings.Intern(&r.Namespace)
	if shared {
		cacheStrings.Intern(&r.Name)
	}
}

// internSecretRef interns a Secret reference's namespace (its name is one object's own).
func internSecretRef(r *corev1.SecretReference) {
	if r != nil {
		cacheStrings.Intern(&r.Namespace)
	}
}

func internPtr(p *string) {
	if p != nil {
		cacheStrings.Intern(p)
	}
}

// conditionsOf returns the object's conditions slice (its elements are the object's own), for
// the kinds whose conditions are reachable without reflection.
func conditionsOf(in any) []metav1.Condition {
	if g, ok := in.(interface{ GetConditions() []metav1.Condition }); ok {
		return g.GetConditions()
	}
	switch o := in.(type) {
	case *infrav1.Metal3Data:
		return o.Status.Conditions
	case *infrav1.Metal3DataClaim:
		return o.Status.Conditions
	case *infrav1.Metal3DataTemplate:
		return o.Status.Conditions
	}
	return nil
}

func internConditions(cs []metav1.Condition) {
	for i := range cs {
		c := &cs[i]
		cacheStrings.Intern(&c.Type)
		intern.Field(cacheStrings, &c.Status)
		cacheStrings.Intern(&c.Reason)
	}
}

// internMeta interns the repeating strings of an object's metadata.
func internMeta(om *metav1.ObjectMeta) {
	cacheStrings.Intern(&om.Namespace)
	if m, ok := internedMap(om.Labels, true); ok {
		om.Labels = m
	}
	if m := cacheLabels.Canonical(om.Labels); !intern.SameMap(m, om.Labels) {
		om.Labels = m
	}
	if m, ok := internedMap(om.Annotations, false); ok {
		om.Annotations = m
	}
	for i := range om.Finalizers {
		cacheStrings.Intern(&om.Finalizers[i])
	}
	for i := range om.OwnerReferences {
		r := &om.OwnerReferences[i]
		cacheStrings.Intern(&r.APIVersion)
		cacheStrings.Intern(&r.Kind)
	}
}

// internedMap returns a copy of m with its keys (and its values, with values) canonical, and
// true, when some key or value is not canonical yet; m and false when all are. A map's key
// cannot be replaced in place, hence the copy; a map already canonical is never written.
func internedMap(m map[string]string, values bool) (map[string]string, bool) {
	canonical := true
	for k, v := range m {
		if !cacheStrings.IsCanonical(k) || (values && !cacheStrings.IsCanonical(v)) {
			canonical = false
			break
		}
	}
	if canonical {
		return m, false
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if values {
			v = cacheStrings.Canonical(v)
		}
		out[cacheStrings.Canonical(k)] = v
	}
	return out, true
}
