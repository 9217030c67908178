package simulator

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
)

// rebootAnnotation is BMO's reboot annotation: while a host carries it (or any
// reboot.metal3.io/<suffix>, one per requester, as Metal3Remediation's
// reboot.metal3.io/metal3-remediation-<uid>), BMO keeps the host powered off; once the last one
// goes, it powers the host on again if spec.online says so.
const rebootAnnotation = "reboot.metal3.io"

func rebootRequested(host *bmov1.BareMetalHost) bool {
	for k := range host.Annotations {
		if k == rebootAnnotation || strings.HasPrefix(k, rebootAnnotation+"/") {
			return true
		}
	}
	return false
}

// followPower powers a provisioned host off and on as the reboot annotations and spec.online
// ask, as BMO does, and reports whether it changed anything.
func (s *Simulator) followPower(ctx context.Context, u *unstructured.Unstructured, host *bmov1.BareMetalHost) (bool, error) {
	if host.Status.Provisioning.State != bmov1.StateProvisioned {
		return false, nil
	}
	want := host.Spec.Online && !rebootRequested(host)
	if host.Status.PoweredOn == want {
		return false, nil
	}
	return true, s.patchStatus(ctx, u, func(st map[string]any) { st["poweredOn"] = want })
}
