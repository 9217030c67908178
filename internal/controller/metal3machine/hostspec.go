package metal3machine

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// The functions here change a BareMetalHost in memory; the reconciler then sends the difference
// as a merge patch, so fields we do not model are never touched.

// hostData is what the host boots with: user data, and meta and network data if any.
type hostData struct {
	UserData    *corev1.SecretReference
	MetaData    *corev1.SecretReference
	NetworkData *corev1.SecretReference
}

// providerID is the machine's ID for Cluster API and the workload Node.
func providerID(host *bmov1.BareMetalHost, m3m *infrav1.Metal3Machine) string {
	return fmt.Sprintf("metal3://%s/%s/%s", host.Namespace, host.Name, m3m.Name)
}

// claim makes the host the machine's: consumerRef, and the cluster-name label so that hosts can
// be listed by cluster (kubectl get bmh -l cluster.x-k8s.io/cluster-name=...).
func claim(host *bmov1.BareMetalHost, m3m *infrav1.Metal3Machine, clusterName string) {
	host.Spec.ConsumerRef = &corev1.ObjectReference{
		APIVersion: infrav1.GroupVersion.String(),
		Kind:       metal3MachineKind,
		Namespace:  m3m.Namespace,
		Name:       m3m.Name,
	}
	if clusterName != "" {
		if host.Labels == nil {
			host.Labels = map[string]string{}
		}
		host.Labels[clusterv1.ClusterNameLabel] = clusterName
	}
}

// provision hands the host what BMO needs to deploy it. The image is written only to a host
// that has none: BMO does not re-image a provisioned host, and a later change of the machine's
// image means a new machine in Cluster API, not an edit of this one. Power goes on with the first
// image, so that a user's later power-off of a provisioned host is not undone.
func provision(host *bmov1.BareMetalHost, m3m *infrav1.Metal3Machine, data hostData) {
	if host.Spec.Image == nil && host.Spec.CustomDeploy == nil {
		if m3m.Spec.CustomDeploy != nil && m3m.Spec.CustomDeploy.Method != "" {
			host.Spec.CustomDeploy = &bmov1.CustomDeploy{Method: m3m.Spec.CustomDeploy.Method}
		}
		if m3m.Spec.Image.URL != "" {
			host.Spec.Image = &bmov1.Image{
				URL:          m3m.Spec.Image.URL,
				Checksum:     ptr.Deref(m3m.Spec.Image.Checksum, ""),
				ChecksumType: ptr.Deref(m3m.Spec.Image.ChecksumType, ""),
				DiskFormat:   m3m.Spec.Image.DiskFormat,
			}
		}
		host.Spec.Online = true
	}
	host.Spec.UserData = data.UserData
	host.Spec.MetaData = data.MetaData
	host.Spec.NetworkData = data.NetworkData
}

// shapeHost makes the host what the machine needs now: claimed, unpaused (the machine is not
// paused, or this would not run), its cleaning mode the machine's, and, once its data is known,
// provisioned. The cleaning mode is written on every reconcile, as upstream does, so that a change
// of the machine's (or its template's) automatedCleaningMode reaches a host already provisioned.
func shapeHost(host *bmov1.BareMetalHost, m3m *infrav1.Metal3Machine, clusterName string, data hostData, dataKnown bool) {
	claim(host, m3m, clusterName)
	unpause(host)
	if mode := m3m.Spec.AutomatedCleaningMode; mode != nil && *mode != "" {
		host.Spec.AutomatedCleaningMode = string(*mode)
	}
	if dataKnown {
		provision(host, m3m, data)
	}
}

// deprovision takes back what provision gave: BMO then wipes the host. The consumerRef stays
// until BMO is done, so no other machine claims a host still deprovisioning.
//
// Power follows upstream CAPM3: a host with disablePowerOff stays on (BMO refuses to power it
// off); with fast track (--fast-track, CAPM3_FAST_TRACK) a host whose disks are cleaned stays on,
// its deploy ramdisk running, so that the next machine provisions it without a reboot; any other
// host is powered off.
func deprovision(host *bmov1.BareMetalHost, fastTrack bool) {
	host.Spec.Image = nil
	host.Spec.CustomDeploy = nil
	host.Spec.UserData = nil
	host.Spec.MetaData = nil
	host.Spec.NetworkData = nil
	host.Spec.Online = keepPoweredOn(host, fastTrack)
}

// keepPoweredOn is upstream's table of a deprovisioned host's power: on with disablePowerOff, on
// with fast track unless cleaning is disabled, off otherwise.
func keepPoweredOn(host *bmov1.BareMetalHost, fastTrack bool) bool {
	switch {
	case host.Spec.DisablePowerOff:
		return true
	case fastTrack:
		return host.Spec.AutomatedCleaningMode != string(infrav1.CleaningModeDisabled)
	default:
		return false
	}
}

// release frees the host for another machine.
func release(host *bmov1.BareMetalHost, fastTrack bool) {
	deprovision(host, fastTrack)
	host.Spec.ConsumerRef = nil
	delete(host.Labels, clusterv1.ClusterNameLabel)
	unpause(host)
}

// deprovisioning says whether BMO still has work to do before the host is free: it holds, or is
// writing, or is wiping an image.
func deprovisioning(host *bmov1.BareMetalHost) bool {
	switch host.Status.Provisioning.State {
	case bmov1.StateProvisioning, bmov1.StateProvisioned, bmov1.StateDeprovisioning, bmov1.StateExternallyProvisioned:
		return true
	}
	return false
}

// pause marks the host paused on behalf of a paused cluster; it leaves alone a pause someone else
// set. It reports whether it changed the host.
func pause(host *bmov1.BareMetalHost) bool {
	if hasAnnotation(host, bmov1.PausedAnnotation) {
		return false
	}
	if host.Annotations == nil {
		host.Annotations = map[string]string{}
	}
	host.Annotations[bmov1.PausedAnnotation] = infrav1.BareMetalHostPausedByValue
	return true
}

// unpause removes our pause only: a pause with another value was set by a person or another
// tool, for their own reasons.
func unpause(host *bmov1.BareMetalHost) bool {
	if host.Annotations[bmov1.PausedAnnotation] != infrav1.BareMetalHostPausedByValue {
		return false
	}
	delete(host.Annotations, bmov1.PausedAnnotation)
	return true
}
