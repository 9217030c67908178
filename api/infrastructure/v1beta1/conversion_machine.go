package v1beta1

import (
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// ConvertTo converts this Metal3Machine to the hub (v1beta2).
func (in *Metal3Machine) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.Metal3Machine)
	src := in.DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	restored := &infrav1.Metal3Machine{}
	ok, err := restoreHub(dst, restored)
	if err != nil {
		return err
	}
	dst.Spec = machineSpecToHub(src.Spec)
	dst.Status = machineStatusToHub(src.Status)
	if ok {
		if same(src.Spec, machineSpecFromHub(restored.Spec)) {
			dst.Spec = restored.Spec
		}
		if same(machineStatusFromHub(restored.Status), withoutV1beta1MachineFields(src.Status)) {
			dst.Status = restored.Status
		}
	}
	s := src.Status
	dst.Status.Deprecated = deprecatedKept(restored.Status.Deprecated, ok, s.FailureReason, s.FailureMessage, s.Conditions)
	only := &Metal3Machine{Status: Metal3MachineStatus{Phase: s.Phase}}
	return saveSpokeData(only, s.Phase == "", dst)
}

// ConvertFrom converts the hub (v1beta2) to this Metal3Machine.
func (in *Metal3Machine) ConvertFrom(srcRaw conversion.Hub) error {
	dst := in
	src := srcRaw.(*infrav1.Metal3Machine).DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	only := &Metal3Machine{}
	if err := takeSpokeData(dst, only); err != nil {
		return err
	}
	dst.Spec = machineSpecFromHub(src.Spec)
	dst.Status = machineStatusFromHub(src.Status)
	dst.Status.FailureReason = only.Status.FailureReason
	dst.Status.FailureMessage = only.Status.FailureMessage
	dst.Status.Conditions = only.Status.Conditions
	dst.Status.Phase = only.Status.Phase
	if reason, message, conditions, ok := deprecatedFromHub(src.Status.Deprecated); ok {
		dst.Status.FailureReason, dst.Status.FailureMessage, dst.Status.Conditions = reason, message, conditions
	}
	return saveHub(src, dst)
}

// withoutV1beta1MachineFields is s without the fields v1beta2 has no place for.
func withoutV1beta1MachineFields(s Metal3MachineStatus) Metal3MachineStatus {
	s.FailureReason, s.FailureMessage, s.Conditions, s.Phase = nil, nil, nil, ""
	return s
}

// ConvertTo converts this Metal3MachineTemplate to the hub (v1beta2).
func (in *Metal3MachineTemplate) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.Metal3MachineTemplate)
	src := in.DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	restored := &infrav1.Metal3MachineTemplate{}
	ok, err := restoreHub(dst, restored)
	if err != nil {
		return err
	}
	dst.Spec.NodeReuse = ptr.To(src.Spec.NodeReuse)
	dst.Spec.Template.Spec = machineSpecToHub(src.Spec.Template.Spec)
	if ok {
		// v1beta1 templates have no metadata: keep v1beta2's.
		dst.Spec.Template.ObjectMeta = restored.Spec.Template.ObjectMeta
		if same(src.Spec.Template.Spec, machineSpecFromHub(restored.Spec.Template.Spec)) {
			dst.Spec.Template.Spec = restored.Spec.Template.Spec
		}
		if ptr.Deref(restored.Spec.NodeReuse, false) == src.Spec.NodeReuse {
			dst.Spec.NodeReuse = restored.Spec.NodeReuse // unset stays unset
		}
	}
	return nil
}

// ConvertFrom converts the hub (v1beta2) to this Metal3MachineTemplate.
func (in *Metal3MachineTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	dst := in
	src := srcRaw.(*infrav1.Metal3MachineTemplate).DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec.NodeReuse = ptr.Deref(src.Spec.NodeReuse, false)
	dst.Spec.Template.Spec = machineSpecFromHub(src.Spec.Template.Spec)
	return saveHub(src, dst)
}

func machineSpecToHub(in Metal3MachineSpec) infrav1.Metal3MachineSpec {
	return infrav1.Metal3MachineSpec{
		ProviderID: ptr.Deref(in.ProviderID, ""),
		Image: infrav1.Image{
			URL: in.Image.URL, Checksum: in.Image.Checksum, ChecksumType: in.Image.ChecksumType, DiskFormat: in.Image.DiskFormat,
		},
		CustomDeploy:          (*infrav1.CustomDeploy)(in.CustomDeploy),
		UserData:              in.UserData,
		HostSelector:          hostSelectorToHub(in.HostSelector),
		DataTemplate:          in.DataTemplate,
		MetaData:              in.MetaData,
		NetworkData:           in.NetworkData,
		AutomatedCleaningMode: castString[infrav1.AutomatedCleaningMode](in.AutomatedCleaningMode),
		FailureDomain:         in.FailureDomain,
	}
}

func machineSpecFromHub(in infrav1.Metal3MachineSpec) Metal3MachineSpec {
	out := Metal3MachineSpec{
		Image: Image{
			URL: in.Image.URL, Checksum: in.Image.Checksum, ChecksumType: in.Image.ChecksumType, DiskFormat: in.Image.DiskFormat,
		},
		CustomDeploy:          (*CustomDeploy)(in.CustomDeploy),
		UserData:              in.UserData,
		HostSelector:          hostSelectorFromHub(in.HostSelector),
		DataTemplate:          in.DataTemplate,
		MetaData:              in.MetaData,
		NetworkData:           in.NetworkData,
		AutomatedCleaningMode: castString[string](in.AutomatedCleaningMode),
		FailureDomain:         in.FailureDomain,
	}
	if in.ProviderID != "" {
		out.ProviderID = ptr.To(in.ProviderID)
	}
	return out
}

func hostSelectorToHub(in HostSelector) infrav1.HostSelector {
	return infrav1.HostSelector{
		MatchLabels: in.MatchLabels,
		MatchExpressions: mapSlice(in.MatchExpressions, func(r HostSelectorRequirement) infrav1.HostSelectorRequirement {
			return infrav1.HostSelectorRequirement{Key: r.Key, Operator: infrav1.HostSelectorOperator(r.Operator), Values: r.Values}
		}),
	}
}

func hostSelectorFromHub(in infrav1.HostSelector) HostSelector {
	return HostSelector{
		MatchLabels: in.MatchLabels,
		MatchExpressions: mapSlice(in.MatchExpressions, func(r infrav1.HostSelectorRequirement) HostSelectorRequirement {
			return HostSelectorRequirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values}
		}),
	}
}

func machineStatusToHub(in Metal3MachineStatus) infrav1.Metal3MachineStatus {
	out := infrav1.Metal3MachineStatus{
		Addresses: mapSlice(in.Addresses, func(a MachineAddress) clusterv1.MachineAddress {
			return clusterv1.MachineAddress{Type: clusterv1.MachineAddressType(a.Type), Address: a.Address}
		}),
		UserData:     in.UserData,
		RenderedData: in.RenderedData,
		MetaData:     in.MetaData,
		NetworkData:  in.NetworkData,
		LastUpdated:  in.LastUpdated,
	}
	if in.Ready {
		out.Initialization.Provisioned = ptr.To(true)
	}
	if in.V1Beta2 != nil {
		out.Conditions = in.V1Beta2.Conditions
	}
	return out
}

func machineStatusFromHub(in infrav1.Metal3MachineStatus) Metal3MachineStatus {
	out := Metal3MachineStatus{
		Ready: ptr.Deref(in.Initialization.Provisioned, false),
		Addresses: mapSlice(in.Addresses, func(a clusterv1.MachineAddress) MachineAddress {
			return MachineAddress{Type: string(a.Type), Address: a.Address}
		}),
		UserData:     in.UserData,
		RenderedData: in.RenderedData,
		MetaData:     in.MetaData,
		NetworkData:  in.NetworkData,
		LastUpdated:  in.LastUpdated,
	}
	if in.Conditions != nil {
		out.V1Beta2 = &Metal3MachineV1Beta2Status{Conditions: in.Conditions}
	}
	return out
}
