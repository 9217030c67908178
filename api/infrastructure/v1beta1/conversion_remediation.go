package v1beta1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// v1beta1 gives a remediation's timeout as a duration, v1beta2 in whole seconds (truncated, as
// Cluster API converts its own timeouts). A duration seconds cannot show (90.5s, 0s rather than
// none) travels in the v1beta2 object's SpokeDataAnnotation and comes back while v1beta2 still
// holds the same number of seconds.

// ConvertTo converts this Metal3Remediation to the hub (v1beta2).
func (in *Metal3Remediation) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.Metal3Remediation)
	src := in.DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	restored := &infrav1.Metal3Remediation{}
	ok, err := restoreHub(dst, restored)
	if err != nil {
		return err
	}
	dst.Spec = remediationSpecToHub(src.Spec)
	dst.Status = remediationStatusToHub(src.Status)
	if ok {
		// v1beta1 has no conditions.
		dst.Status.Conditions = restored.Status.Conditions
	}
	return saveTimeout(src.Spec, dst)
}

// ConvertFrom converts the hub (v1beta2) to this Metal3Remediation.
func (in *Metal3Remediation) ConvertFrom(srcRaw conversion.Hub) error {
	dst := in
	src := srcRaw.(*infrav1.Metal3Remediation).DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	spec, err := remediationSpecFromHub(src.Spec, dst)
	if err != nil {
		return err
	}
	dst.Spec = spec
	dst.Status = remediationStatusFromHub(src.Status)
	return saveHub(src, dst)
}

// ConvertTo converts this Metal3RemediationTemplate to the hub (v1beta2).
func (in *Metal3RemediationTemplate) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*infrav1.Metal3RemediationTemplate)
	src := in.DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	restored := &infrav1.Metal3RemediationTemplate{}
	ok, err := restoreHub(dst, restored)
	if err != nil {
		return err
	}
	dst.Spec.Template.Spec = remediationSpecToHub(src.Spec.Template.Spec)
	dst.Status.Status = remediationStatusToHub(src.Status.Status)
	if ok {
		dst.Status.Status.Conditions = restored.Status.Status.Conditions
	}
	return saveTimeout(src.Spec.Template.Spec, dst)
}

// ConvertFrom converts the hub (v1beta2) to this Metal3RemediationTemplate.
func (in *Metal3RemediationTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	dst := in
	src := srcRaw.(*infrav1.Metal3RemediationTemplate).DeepCopy()
	dst.ObjectMeta = src.ObjectMeta
	spec, err := remediationSpecFromHub(src.Spec.Template.Spec, dst)
	if err != nil {
		return err
	}
	dst.Spec.Template.Spec = spec
	dst.Status.Status = remediationStatusFromHub(src.Status.Status)
	return saveHub(src, dst)
}

func remediationSpecToHub(in Metal3RemediationSpec) infrav1.Metal3RemediationSpec {
	if in.Strategy == nil {
		return infrav1.Metal3RemediationSpec{}
	}
	return infrav1.Metal3RemediationSpec{Strategy: &infrav1.RemediationStrategy{
		Type:           infrav1.RemediationType(in.Strategy.Type),
		RetryLimit:     int32(in.Strategy.RetryLimit), //nolint:gosec // the v1beta1 CRD holds a small count
		TimeoutSeconds: timeoutSeconds(in.Strategy.Timeout),
	}}
}

// remediationSpecFromHub converts a v1beta2 spec; meta is the v1beta1 object's metadata, whose
// SpokeDataAnnotation (taken off) may hold the exact v1beta1 timeout.
func remediationSpecFromHub(in infrav1.Metal3RemediationSpec, meta metav1.Object) (Metal3RemediationSpec, error) {
	only := &Metal3Remediation{}
	if err := takeSpokeData(meta, only); err != nil {
		return Metal3RemediationSpec{}, err
	}
	if in.Strategy == nil {
		return Metal3RemediationSpec{}, nil
	}
	out := &RemediationStrategy{
		Type:       RemediationType(in.Strategy.Type),
		RetryLimit: int(in.Strategy.RetryLimit),
		Timeout:    timeoutFromSeconds(in.Strategy.TimeoutSeconds),
	}
	if saved := only.Spec.Strategy; saved != nil && timeoutSeconds(saved.Timeout) == in.Strategy.TimeoutSeconds {
		out.Timeout = saved.Timeout
	}
	return Metal3RemediationSpec{Strategy: out}, nil
}

// saveTimeout keeps a v1beta1 timeout whose text whole seconds do not give back (300s, which
// seconds show as 5m0s; 90.5s; 0s rather than none) in hub's annotation.
func saveTimeout(in Metal3RemediationSpec, hub metav1.Object) error {
	if in.Strategy == nil {
		return nil
	}
	t := in.Strategy.Timeout
	shown := timeoutFromSeconds(timeoutSeconds(t))
	exact := (t == nil && shown == nil) || (t != nil && shown != nil && *t == *shown)
	only := &Metal3Remediation{Spec: Metal3RemediationSpec{Strategy: &RemediationStrategy{Timeout: t}}}
	return saveSpokeData(only, exact, hub)
}

// timeoutSeconds is a timeout in whole seconds; text that is no duration (the CRD refuses it)
// counts as none.
func timeoutSeconds(d *Duration) int32 {
	if d == nil {
		return 0
	}
	parsed, err := time.ParseDuration(string(*d))
	if err != nil {
		return 0
	}
	return *clusterv1.ConvertToSeconds(&metav1.Duration{Duration: parsed})
}

func timeoutFromSeconds(s int32) *Duration {
	if s == 0 {
		return nil
	}
	text := Duration((time.Duration(s) * time.Second).String())
	return &text
}

func remediationStatusToHub(in Metal3RemediationStatus) infrav1.Metal3RemediationStatus {
	return infrav1.Metal3RemediationStatus{
		Phase:          in.Phase,
		RetryCount:     int32(in.RetryCount), //nolint:gosec // the v1beta1 CRD holds a small count
		LastRemediated: in.LastRemediated,
	}
}

func remediationStatusFromHub(in infrav1.Metal3RemediationStatus) Metal3RemediationStatus {
	return Metal3RemediationStatus{
		Phase:          in.Phase,
		RetryCount:     int(in.RetryCount),
		LastRemediated: in.LastRemediated,
	}
}
