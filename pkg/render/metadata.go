package render

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/metalwire/metalwire/pkg/render/yamlout"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// ProviderIDKey is the metaData key that always holds <namespace>/<host>/<metal3machine>.
const ProviderIDKey = "providerid"

// MetaData renders the metaData map. Sources are applied in a fixed order and a later source
// overwrites an earlier one's key: fromHostInterfaces, ipAddresses (seed-era), ipAddressesFromPool,
// prefixesFromPool, gatewaysFromPool, dnsServersFromPool, indexes, namespaces, objectNames,
// fromLabels, fromAnnotations, strings; then providerid. A nil md still gives providerid.
func MetaData(md *infrav1.MetaData, f *Facts) (map[string]string, error) {
	out := map[string]string{}
	if md == nil {
		md = &infrav1.MetaData{}
	}
	for i, it := range md.FromHostInterfaces {
		field := fmt.Sprintf("metaData.fromHostInterfaces[%d]", i)
		var mac string
		var err error
		if ptr.Deref(it.FromBootMAC, false) {
			mac, err = bootMAC(field+".fromBootMAC", f)
		} else {
			mac, err = nicMAC(field+".interface", it.Interface, f)
		}
		if err != nil {
			return nil, err
		}
		out[it.Key] = mac
	}
	for i, it := range md.IPAddresses {
		field := fmt.Sprintf("metaData.ipAddresses[%d]", i)
		r := addressRange{start: (*string)(it.Start), end: (*string)(it.End), subnet: (*string)(it.Subnet), step: it.Step}
		a, _, err := r.at(field, f.Index)
		if err != nil {
			return nil, err
		}
		out[it.Key] = a.String()
	}
	poolLists := []struct {
		name  string
		items []infrav1.FromPool
		value func(PoolAddress) string
	}{
		{"ipAddressesFromPool", md.IPAddressesFromPool, func(a PoolAddress) string { return a.Address }},
		{"prefixesFromPool", md.PrefixesFromPool, func(a PoolAddress) string { return strconv.Itoa(a.Prefix) }},
		{"gatewaysFromPool", md.GatewaysFromPool, func(a PoolAddress) string { return a.Gateway }},
		{"dnsServersFromPool", md.DNSServersFromPool, func(a PoolAddress) string { return strings.Join(a.DNSServers, ",") }},
	}
	for _, list := range poolLists {
		for i, it := range list.items {
			a, err := metaDataPool(fmt.Sprintf("metaData.%s[%d]", list.name, i), it).address(f)
			if err != nil {
				return nil, err
			}
			out[it.Key] = list.value(a)
		}
	}
	for _, it := range md.Indexes {
		step := int64(it.Step)
		if step == 0 {
			step = 1 // the CRD default, missing when a template is read from a file
		}
		out[it.Key] = it.Prefix + strconv.FormatInt(int64(ptr.Deref(it.Offset, 0))+int64(f.Index)*step, 10) + it.Suffix
	}
	for _, it := range md.Namespaces {
		out[it.Key] = f.Namespace
	}
	for i, it := range md.ObjectNames {
		o, err := objectFor(fmt.Sprintf("metaData.objectNames[%d].object", i), it.Object, f)
		if err != nil {
			return nil, err
		}
		out[it.Key] = o.Name
	}
	for i, it := range md.FromLabels {
		o, err := objectFor(fmt.Sprintf("metaData.fromLabels[%d].object", i), it.Object, f)
		if err != nil {
			return nil, err
		}
		out[it.Key] = o.Labels[it.Label]
	}
	for i, it := range md.FromAnnotations {
		v, err := annotationValue(fmt.Sprintf("metaData.fromAnnotations[%d].object", i), it.Object, it.Annotation, f)
		if err != nil {
			return nil, err
		}
		out[it.Key] = v
	}
	for _, it := range md.Strings {
		out[it.Key] = it.Value
	}
	if f.Metal3Machine == nil {
		return nil, &Error{
			Field:  "metaData",
			Reason: ReasonObjectUnavailable,
			Detail: "providerid (<namespace>/<host>/<metal3machine>) needs object metal3machine, which is not available before provisioning; render metaData only for a provisioned host",
			Object: infrav1.ObjectMetal3Machine,
		}
	}
	ns := f.Metal3Machine.Namespace
	if ns == "" {
		ns = f.Namespace
	}
	out[ProviderIDKey] = ns + "/" + f.Host.Name + "/" + f.Metal3Machine.Name
	return out, nil
}

// MarshalMetaData writes the metaData map as YAML, keys sorted, as the Secret holds it.
func MarshalMetaData(md map[string]string) ([]byte, error) {
	return yamlout.Marshal(md)
}

// nicMAC returns the MAC of the host NIC with the given name.
func nicMAC(field, name string, f *Facts) (string, error) {
	if len(f.NICs) == 0 {
		return "", &Error{
			Field:  field,
			Reason: ReasonHostNotInspected,
			Detail: fmt.Sprintf("host %s has no inspected NICs yet, so NIC %q cannot be found; wait for inspection, or use the boot MAC (fromBootMAC) or a fixed MAC", f.Host.Name, name),
		}
	}
	names := make([]string, 0, len(f.NICs))
	for _, nic := range f.NICs {
		if nic.Name == name {
			mac, ok := parseMAC(nic.MAC)
			if !ok {
				return "", invalid(field, "NIC %q of host %s has MAC %q, which is not a MAC address; fix the host's hardware details (re-inspect)", name, f.Host.Name, nic.MAC)
			}
			return mac, nil
		}
		names = append(names, nic.Name)
	}
	return "", invalid(field, "host %s has no NIC %q; its NICs are %s", f.Host.Name, name, strings.Join(names, ", "))
}

// bootMAC returns the host's boot MAC.
func bootMAC(field string, f *Facts) (string, error) {
	if f.BootMAC == "" {
		return "", invalid(field, "host %s has no spec.bootMACAddress; set it on the host, or name a NIC with interface", f.Host.Name)
	}
	mac, ok := parseMAC(f.BootMAC)
	if !ok {
		return "", invalid(field, "host %s has spec.bootMACAddress %q, which is not a MAC address; %s", f.Host.Name, f.BootMAC, macHint)
	}
	return mac, nil
}
