package networkdevice

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	netv1 "github.com/metalwire/metalwire/api/network/v1alpha1"
)

// DeviceTypes maps the networking-generic-switch device types a BareMetalSwitch names to the
// networkOS of the driver metalwire drives them with.
var DeviceTypes = map[string]netv1.NetworkOS{
	"netmiko_arista_eos":    "eos",
	"netmiko_cisco_nxos":    "nxos",
	"netmiko_juniper":       "junos",
	"netmiko_juniper_junos": "junos",
	"netmiko_sonic":         "sonic",
	"netmiko_dell_sonic":    "sonic",
	"netmiko_dell_os10":     "dellos10",
	"netmiko_cumulus_nvue":  "cumulus",
	"netmiko_ovs_linux":     netv1.NetworkOSOpenvSwitchSSH,
}

// effectiveSwitch is the switch as the drivers see it: for an entry naming a BareMetalSwitch,
// its address, port, macAddress, credentials and networkOS come from that object.
func (r *Reconciler) effectiveSwitch(ctx context.Context, ns string, sw netv1.Switch) (netv1.Switch, error) {
	if sw.BareMetalSwitchRef == nil {
		return sw, nil
	}
	name := sw.BareMetalSwitchRef.Name
	if !r.bareMetalSwitches {
		return sw, fmt.Errorf("bareMetalSwitchRef %s: this cluster serves no BareMetalSwitch kind (baremetal-operator v0.14 or later installs it)", name)
	}
	bms := &bmov1.BareMetalSwitch{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, bms); err != nil {
		if apierrors.IsNotFound(err) {
			return sw, fmt.Errorf("bareMetalSwitchRef: BareMetalSwitch %s not found in namespace %s", name, ns)
		}
		return sw, err
	}
	os, ok := DeviceTypes[bms.Spec.DeviceType]
	if !ok {
		return sw, fmt.Errorf("BareMetalSwitch %s: deviceType %q is not one metalwire can drive; supported: %s",
			name, bms.Spec.DeviceType, strings.Join(slices.Sorted(maps.Keys(DeviceTypes)), ", "))
	}
	out := sw
	out.Address, out.NetworkOS, out.MACAddress = bms.Spec.Address, os, bms.Spec.MACAddress
	if bms.Spec.Port != nil {
		out.Port = *bms.Spec.Port
	}
	out.CredentialsRef = &netv1.SecretReference{Name: bms.Spec.Credentials.SecretName}
	return out, nil
}
