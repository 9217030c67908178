package v1beta1

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// ConvertTo converts this Metal3Cluster to the hub (v1beta2).
func (in *Metal3Cluster) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.Metal3Cluster)
	src := in.DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	restored := &infrav1.Metal3Cluster{}
	ok, err := restoreHub(dst, restored)
	if err != nil {
		return err
	}
	dst.Spec = clusterSpecToHub(src.Spec)
	dst.Status = clusterStatusToHub(src.Status)
	if ok {
		if same(src.Spec, clusterSpecFromHub(restored.Spec, true)) {
			dst.Spec = restored.Spec
		}
		if same(clusterStatusFromHub(restored.Status), withoutV1beta1ClusterFields(src.Status)) {
			dst.Status = restored.Status
		}
	}
	dst.Status.Deprecated = deprecatedKept(restored.Status.Deprecated, ok, src.Status.FailureReason, src.Status.FailureMessage, src.Status.Conditions)
	return saveWrittenWithoutNoCloudProvider(src.Spec, dst)
}

// ConvertFrom converts the hub (v1beta2) to this Metal3Cluster.
func (in *Metal3Cluster) ConvertFrom(srcRaw conversion.Hub) error {
	dst := in
	src := srcRaw.(*infrav1.Metal3Cluster).DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	only := &Metal3Cluster{}
	if err := takeSpokeData(dst, only); err != nil {
		return err
	}
	dst.Spec = clusterSpecFromHub(src.Spec, !writtenWithoutNoCloudProvider(only.Spec, src.Spec))
	dst.Status = clusterStatusFromHub(src.Status)
	// Before status.deprecated existed, the v1beta1 fields were kept in the spoke annotation.
	dst.Status.FailureReason = only.Status.FailureReason
	dst.Status.FailureMessage = only.Status.FailureMessage
	dst.Status.Conditions = only.Status.Conditions
	if reason, message, conditions, ok := deprecatedFromHub(src.Status.Deprecated); ok {
		dst.Status.FailureReason, dst.Status.FailureMessage, dst.Status.Conditions = reason, message, conditions
	}
	return saveHub(src, dst)
}

// withoutV1beta1ClusterFields is s without the fields v1beta2 has no place for.
func withoutV1beta1ClusterFields(s Metal3ClusterStatus) Metal3ClusterStatus {
	s.FailureReason, s.FailureMessage, s.Conditions = nil, nil, nil
	return s
}

// ConvertTo converts this Metal3ClusterTemplate to the hub (v1beta2).
func (in *Metal3ClusterTemplate) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.Metal3ClusterTemplate)
	src := in.DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	restored := &infrav1.Metal3ClusterTemplate{}
	ok, err := restoreHub(dst, restored)
	if err != nil {
		return err
	}
	dst.Spec.Template.Spec = clusterSpecToHub(src.Spec.Template.Spec)
	if ok {
		// v1beta1 templates have no metadata: keep v1beta2's.
		dst.Spec.Template.ObjectMeta = restored.Spec.Template.ObjectMeta
		if same(src.Spec.Template.Spec, clusterSpecFromHub(restored.Spec.Template.Spec, true)) {
			dst.Spec.Template.Spec = restored.Spec.Template.Spec
		}
	}
	return saveWrittenWithoutNoCloudProvider(src.Spec.Template.Spec, dst)
}

// ConvertFrom converts the hub (v1beta2) to this Metal3ClusterTemplate.
func (in *Metal3ClusterTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	dst := in
	src := srcRaw.(*infrav1.Metal3ClusterTemplate).DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	only := &Metal3Cluster{}
	if err := takeSpokeData(dst, only); err != nil {
		return err
	}
	dst.Spec.Template.Spec = clusterSpecFromHub(src.Spec.Template.Spec, !writtenWithoutNoCloudProvider(only.Spec, src.Spec.Template.Spec))
	return saveHub(src, dst)
}

// clusterSpecToHub converts a v1beta1 spec. A noCloudProvider that only repeats
// cloudProviderEnabled (its negation, as upstream's conversion and `metalwire migrate --to
// v1beta1` write it) is left out of v1beta2, where cloudProviderEnabled says it all: it is derived
// again for v1beta1 readers (clusterSpecFromHub), so the object reads back as written either way,
// and one written as v1beta2 and its v1beta1 rendering are the same v1beta2 object.
func clusterSpecToHub(in Metal3ClusterSpec) infrav1.Metal3ClusterSpec {
	noCloudProvider := in.NoCloudProvider
	if noCloudProvider != nil && in.CloudProviderEnabled != nil && *noCloudProvider == !*in.CloudProviderEnabled {
		noCloudProvider = nil
	}
	return infrav1.Metal3ClusterSpec{
		ControlPlaneEndpoint: infrav1.APIEndpoint{Host: in.ControlPlaneEndpoint.Host, Port: int32(in.ControlPlaneEndpoint.Port)}, //nolint:gosec // ports fit
		NoCloudProvider:      noCloudProvider,                                                                                    //nolint:staticcheck // both versions keep the deprecated field
		CloudProviderEnabled: in.CloudProviderEnabled,
		FailureDomains:       failureDomainsToHub(in.FailureDomains),
	}
}

// clusterSpecFromHub converts a v1beta2 spec. With derive, like upstream's conversion, a v1beta2
// object that says only cloudProviderEnabled shows v1beta1's noCloudProvider too (its negation),
// so that v1beta1 clients that read only noCloudProvider see the same setting.
func clusterSpecFromHub(in infrav1.Metal3ClusterSpec, derive bool) Metal3ClusterSpec {
	noCloudProvider := in.NoCloudProvider //nolint:staticcheck // both versions keep the deprecated field
	if derive && noCloudProvider == nil && in.CloudProviderEnabled != nil {
		noCloudProvider = ptr.To(!*in.CloudProviderEnabled)
	}
	return Metal3ClusterSpec{
		ControlPlaneEndpoint: APIEndpoint{Host: in.ControlPlaneEndpoint.Host, Port: int(in.ControlPlaneEndpoint.Port)},
		NoCloudProvider:      noCloudProvider,
		CloudProviderEnabled: in.CloudProviderEnabled,
		FailureDomains:       failureDomainsFromHub(in.FailureDomains),
	}
}

func clusterStatusToHub(in Metal3ClusterStatus) infrav1.Metal3ClusterStatus {
	out := infrav1.Metal3ClusterStatus{
		FailureDomains: failureDomainsToHub(in.FailureDomains),
		LastUpdated:    in.LastUpdated,
	}
	if in.Ready {
		out.Initialization.Provisioned = ptr.To(true)
	}
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
	}
	return out
}

func clusterStatusFromHub(in infrav1.Metal3ClusterStatus) Metal3ClusterStatus {
	out := Metal3ClusterStatus{
		Ready:          ptr.Deref(in.Initialization.Provisioned, false),
		FailureDomains: failureDomainsFromHub(in.FailureDomains),
		LastUpdated:    in.LastUpdated,
	}
	if in.Conditions != nil {
		out.V1Beta2 = &Metal3ClusterV1Beta2Status{Conditions: in.Conditions}
	}
	return out
}

// failureDomainsToHub turns v1beta1's map into v1beta2's list, ordered by name.
func failureDomainsToHub(in FailureDomains) []clusterv1.FailureDomain {
	if in == nil {
		return nil
	}
	out := make([]clusterv1.FailureDomain, 0, len(in))
	for _, name := range slices.Sorted(maps.Keys(in)) {
		fd := clusterv1.FailureDomain{Name: name, Attributes: in[name].Attributes, ControlPlane: in[name].ControlPlane}
		out = append(out, fd)
	}
	return out
}

func failureDomainsFromHub(in []clusterv1.FailureDomain) FailureDomains {
	if in == nil {
		return nil
	}
	out := make(FailureDomains, len(in))
	for _, fd := range in {
		out[fd.Name] = FailureDomainSpec{ControlPlane: fd.ControlPlane, Attributes: fd.Attributes}
	}
	return out
}

// A v1beta1 object written with cloudProviderEnabled and no noCloudProvider reads back without
// noCloudProvider: its v1beta2 object's SpokeDataAnnotation holds a v1beta1 spec with only
// cloudProviderEnabled, and while v1beta2 holds that same value noCloudProvider is not derived.

func saveWrittenWithoutNoCloudProvider(in Metal3ClusterSpec, hub metav1.Object) error {
	only := &Metal3Cluster{Spec: Metal3ClusterSpec{CloudProviderEnabled: in.CloudProviderEnabled}}
	return saveSpokeData(only, in.NoCloudProvider != nil || in.CloudProviderEnabled == nil, hub)
}

func writtenWithoutNoCloudProvider(only Metal3ClusterSpec, hub infrav1.Metal3ClusterSpec) bool {
	return only.CloudProviderEnabled != nil && hub.NoCloudProvider == nil && same(only.CloudProviderEnabled, hub.CloudProviderEnabled) //nolint:staticcheck // both versions keep the deprecated field
}
