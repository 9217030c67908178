package metal3data

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	networkv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller/fabricindex"
	"github.com/metalwire/metalwire/pkg/fabric"
	"github.com/metalwire/metalwire/pkg/render"
)

// The host and its switch ports must agree. Once a Metal3Data's network data is rendered for a
// host whose cards a ClusterNetwork uses, it is compared with what the host's switch ports
// carry (the NIC objects' status, written by the fabric controller) — at rendering, and again
// whenever the fabric changes them. A disagreement is HostSwitchMismatch=True naming each card,
// its port and both sides, and a Warning event; it does not stop the host: the user decides.

// checkHostSwitch compares rendered network data (the networkData Secret's YAML) with the
// switch ports of the host hostNS/hostName and sets HostSwitchMismatch on data. Hosts no
// ClusterNetwork uses, and data without network data, have no such condition.
func (r *Reconciler) checkHostSwitch(ctx context.Context, data *infrav1.Metal3Data, hostNS, hostName string, networkData []byte) error {
	return r.checkHostSwitchWith(ctx, data, hostNS, hostName, func(context.Context) ([]byte, error) { return networkData, nil })
}

// checkHostSwitchWith is checkHostSwitch with the network data read by networkData, only for a
// host a ClusterNetwork uses: a read that goes to the API server is made only then.
func (r *Reconciler) checkHostSwitchWith(ctx context.Context, data *infrav1.Metal3Data, hostNS, hostName string, networkData func(context.Context) ([]byte, error)) error {
	nics := &networkv1.NICList{}
	if err := r.Client.List(ctx, nics, client.InNamespace(hostNS), client.MatchingFields{fabricindex.NICByNode: hostName}); err != nil {
		return fmt.Errorf("listing the NIC objects of host %s: %w", hostName, err)
	}
	ports := cardPorts(nics.Items)
	var raw []byte
	if len(ports) > 0 {
		var err error
		if raw, err = networkData(ctx); err != nil {
			return err
		}
	}
	if len(ports) == 0 || raw == nil {
		meta.RemoveStatusCondition(&data.Status.Conditions, infrav1.DataHostSwitchMismatchCondition)
		return nil
	}
	nd, err := render.ParseNetworkData(raw)
	if err != nil {
		return fmt.Errorf("reading back the rendered network data of host %s: %w", hostName, err)
	}
	before := meta.FindStatusCondition(data.Status.Conditions, infrav1.DataHostSwitchMismatchCondition)
	wasMismatch := before != nil && before.Status == metav1.ConditionTrue
	mismatches := fabric.Agree(nd.Cards(), ports)
	if len(mismatches) == 0 {
		setCondition(data, infrav1.DataHostSwitchMismatchCondition, metav1.ConditionFalse, infrav1.DataHostSwitchAgreeReason, "")
		if wasMismatch && r.Recorder != nil {
			r.Recorder.Eventf(data, nil, corev1.EventTypeNormal, infrav1.DataHostSwitchAgreeReason, "CheckSwitchPorts",
				"the network data of host %s agrees with its switch ports again", hostName)
		}
		return nil
	}
	lines := make([]string, len(mismatches))
	for i, m := range mismatches {
		lines[i] = m.String()
	}
	msg := fmt.Sprintf("the network data of host %s disagrees with its switch ports; on real hardware this traffic is lost. Take the bonds and VLAN ids from the ClusterNetwork (bondFrom, vlanIDFrom) or change its networks: %s",
		hostName, strings.Join(lines, "; "))
	setCondition(data, infrav1.DataHostSwitchMismatchCondition, metav1.ConditionTrue, infrav1.DataHostSwitchMismatchReason, msg)
	if r.Recorder != nil && (!wasMismatch || before.Message != msg) {
		r.Recorder.Eventf(data, nil, corev1.EventTypeWarning, infrav1.DataHostSwitchMismatchReason, "CheckSwitchPorts", "%s", mismatchNote(hostName, lines))
	}
	return nil
}

// mismatchNote is the event's note: an event holds 1 KiB, so the first disagreement and how
// many more; the condition has them all.
func mismatchNote(host string, lines []string) string {
	note := fmt.Sprintf("the network data of host %s disagrees with its switch ports: %s", host, lines[0])
	if len(lines) > 1 {
		note += fmt.Sprintf(" (and %d more: see condition %s)", len(lines)-1, infrav1.DataHostSwitchMismatchCondition)
	}
	if len(note) > 1000 {
		note = note[:1000] + "…"
	}
	return note
}

// recheckHostSwitch runs the check for a rendered Metal3Data: its host is its machine's, its
// network data the Secret it wrote, read from the API server (the manager keeps no rendered
// Secret's data in memory) and only for a host a ClusterNetwork uses.
func (r *Reconciler) recheckHostSwitch(ctx context.Context, data *infrav1.Metal3Data) error {
	if data.Spec.NetworkData == nil || data.Spec.Claim.Name == "" {
		return nil
	}
	m3m := &infrav1.Metal3Machine{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: data.Namespace, Name: data.Spec.Claim.Name}, m3m); err != nil {
		return client.IgnoreNotFound(err)
	}
	hostNS, hostName, ok := hostKey(m3m.Annotations[infrav1.HostAnnotation], m3m.Namespace)
	if !ok {
		return nil
	}
	ns := data.Spec.NetworkData.Namespace
	if ns == "" {
		ns = data.Namespace
	}
	key := client.ObjectKey{Namespace: ns, Name: data.Spec.NetworkData.Name}
	var missing bool
	err := r.checkHostSwitchWith(ctx, data, hostNS, hostName, func(ctx context.Context) ([]byte, error) {
		secret := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, key, secret); err != nil {
			if apierrors.IsNotFound(err) {
				missing = true
			}
			return nil, err
		}
		return secret.Data[infrav1.DataSecretNetworkDataKey], nil
	})
	if missing {
		return nil // re-created first (recreateSecrets), checked on its event
	}
	return err
}

// cardPorts lists the cards of the NIC objects a ClusterNetwork uses, with what the fabric put
// on their switch ports.
func cardPorts(nics []networkv1.NIC) []fabric.CardPort {
	var out []fabric.CardPort
	for i := range nics {
		nic := &nics[i]
		if nic.Status.ClusterNetwork == "" {
			continue
		}
		for j, card := range nic.Spec.NICs {
			p := fabric.CardPort{
				MAC: card.MAC, Name: card.Name,
				Switch: card.NetworkDevice.Switch.Name, Port: card.NetworkDevice.Switch.Port.String(),
			}
			if sn := card.SmartNIC; sn != nil { // the host faces its card's own switch
				p.Switch, p.Port = sn.Switch, sn.HostPort
			}
			if j < len(nic.Status.NICs) && nic.Status.NICs[j] != nil {
				assignPort(&p, nic.Status.NICs[j])
			}
			out = append(out, p)
		}
	}
	return out
}

// assignPort fills in what the fabric configured on a card's port.
func assignPort(p *fabric.CardPort, a *networkv1.NICAssignment) {
	p.Assigned = true
	if a.LAG != nil { // the card's port is a member of a bond on the switch
		p.LAG, p.LACP = a.LAG.Name, a.LAG.Mode != networkv1.LAGStatic
	}
	if a.PortMode != networkv1.PortModeTrunk {
		p.Mode, p.VLAN = fabric.ModeAccess, int(a.VLANID)
		return
	}
	p.Mode = fabric.ModeTrunk
	if len(a.Networks) == 0 {
		p.Trunk = []int{int(a.VLANID)}
		return
	}
	for _, n := range a.Networks {
		p.Trunk = append(p.Trunk, int(n.VLANID))
	}
	slices.Sort(p.Trunk)
}

// nicToData maps a NIC object whose status changed to the Metal3Data of the machine holding its
// host, rendered or not: a rendered one is checked again against the new switch ports.
func (r *Reconciler) nicToData(ctx context.Context, o client.Object) []reconcile.Request {
	nic, ok := o.(*networkv1.NIC)
	if !ok {
		return nil
	}
	return r.dataOfHost(ctx, nic.Namespace, nic.Spec.Node, true)
}
