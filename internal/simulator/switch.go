package simulator

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	networkv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// The simulated switch: a STAND-IN (internal/devenv/standin), not a switch. Dev mode
// registers the stand-in driver for SwitchNetworkOS in its own manager only, so the NetworkDevice
// below is a valid manifest and the fabric controllers run unchanged; nothing real is configured.
const (
	// SwitchNetworkDevice is the NetworkDevice holding the simulated switch.
	SwitchNetworkDevice = "sim-fabric"
	// SwitchName is the simulated switch's name in it.
	SwitchName = "sim-tor"
	// SwitchAddress is where the stand-in driver keeps the simulated switch (it dials nothing).
	SwitchAddress = "sim-tor.stand-in.invalid"
	// SwitchNetworkOS is the networkOS the stand-in driver answers for in dev mode.
	SwitchNetworkOS = networkv1.NetworkOSSimulated
	// SwitchBridge is the bridge of the simulated switch.
	SwitchBridge = "br-sim"
)

// SwitchPort is the port of the simulated switch a host's fabric card is cabled to.
func SwitchPort(host, nic string) string { return host + "-" + nic }

// CreateFabric creates the NetworkDevice of the simulated switch and one NIC object per host,
// cabling the host's two onboard cards to ports of the switch. Objects that exist are left as
// they are, as CreateHosts does.
func (s *Simulator) CreateFabric(ctx context.Context, ns string, hosts []string) error {
	device := &networkv1.NetworkDevice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SwitchNetworkDevice},
		Spec: networkv1.NetworkDeviceSpec{Switches: []networkv1.Switch{{
			Name: SwitchName, Address: SwitchAddress, NetworkOS: SwitchNetworkOS, Bridge: SwitchBridge,
		}}},
	}
	if err := s.Client.Create(ctx, device); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating NetworkDevice %s/%s of the simulated switch: %w", ns, SwitchNetworkDevice, err)
	}
	for _, host := range hosts {
		nic := &networkv1.NIC{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: host},
			Spec:       networkv1.NICSpec{Node: host, NetworkDeviceRef: SwitchNetworkDevice},
		}
		for _, card := range nics[:2] { // every simulated host has the two onboard ports
			speed := int32(card.speedGbps * 1000) //nolint:gosec // Mbit/s of a simulated card: at most 25000
			nic.Spec.NICs = append(nic.Spec.NICs, networkv1.HostNIC{
				Name: card.name, MAC: MAC(host, card.name),
				NetworkDevice: networkv1.NICNetworkDevice{Switch: networkv1.SwitchPortRef{
					Name: SwitchName, Port: intstr.FromString(SwitchPort(host, card.name)),
				}},
				Capability: networkv1.NICCapability{Speed: speed},
			})
		}
		if err := s.Client.Create(ctx, nic); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating NIC %s/%s of the simulated host: %w", ns, host, err)
		}
	}
	return nil
}
