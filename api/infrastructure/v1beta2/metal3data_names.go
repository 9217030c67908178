package v1beta2

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Object names are part of the contract: they are deterministic, so the API server's name
// uniqueness is what keeps two claims from taking one index, and a controller that restarted
// with an empty status rebuilds it from the names. Every controller derives them here.

// DataName is the name of the Metal3Data holding an index of a template: <template>-<index>.
func DataName(template string, index int32) string {
	return template + "-" + strconv.FormatInt(int64(index), 10)
}

// DataIndexFromName is the inverse of DataName: the index a Metal3Data of the template holds,
// and false when the name is not <template>-<index>.
func DataIndexFromName(template, name string) (int32, bool) {
	digits, ok := strings.CutPrefix(name, template+"-")
	// Only the digits DataName writes: no sign, no leading zero, so each index has one name.
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	index, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(index), true
}

// HostClaimName is the address claim of a BareMetalHost in a pool: <host>-<pool>. The
// pre-provisioning controller names its claims so, and the Metal3Data controller too with IP
// reuse, so that both share one claim and the host keeps one address.
func HostClaimName(host, pool string) string {
	return host + "-" + pool
}

// MetaDataSecretName is the Secret holding a machine's rendered metaData:
// <metal3machine>-metadata-<index>, the seed's naming.
func MetaDataSecretName(machine string, index int32) string {
	return machine + "-metadata-" + strconv.FormatInt(int64(index), 10)
}

// NetworkDataSecretName is the Secret holding a machine's rendered networkData:
// <metal3machine>-networkdata-<index>.
func NetworkDataSecretName(machine string, index int32) string {
	return machine + "-networkdata-" + strconv.FormatInt(int64(index), 10)
}

// DataSecretNames are the names of a Metal3Data's Secrets, decided here alone: those its spec
// names, else <machine>-metadata-<index> and <machine>-networkdata-<index> (machine is the
// Metal3Machine its claim is named after). A Metal3Data CAPM3 wrote names <machine>-metadata and
// <machine>-networkdata; those names stay, so that the host, which points at them, never has to
// be re-pointed (see docs/takeover.md).
func DataSecretNames(data *Metal3Data, machine string) (metaData, networkData string) {
	var index int32
	if data.Spec.Index != nil {
		index = *data.Spec.Index
	}
	metaData, networkData = MetaDataSecretName(machine, index), NetworkDataSecretName(machine, index)
	if ref := data.Spec.MetaData; ref != nil && ref.Name != "" {
		metaData = ref.Name
	}
	if ref := data.Spec.NetworkData; ref != nil && ref.Name != "" {
		networkData = ref.Name
	}
	return metaData, networkData
}

// PreprovisioningSecretName is the Secret holding a host's pre-provisioning networkData.
func PreprovisioningSecretName(host string) string {
	return host + PreprovisioningSecretSuffix
}

// ParsePreprovisioningReference reads the value of a host's
// baremetalhost.metal3.io/preprovisioningnetworkdata-reference annotation and returns the name of
// the Metal3PreprovisioningDataTemplate it names. The error says what is wrong and what to
// write instead, for the template's status and the host's events.
func ParsePreprovisioningReference(value string) (string, error) {
	const want = "write " + PreprovisioningDataTemplateReferencePrefix + "<template name>"
	resource, name, ok := strings.Cut(strings.TrimSpace(value), "/")
	switch {
	case strings.TrimSpace(value) == "":
		return "", fmt.Errorf("the reference is empty; %s", want)
	case !ok:
		return "", fmt.Errorf("%q is not <resource>.<group>/<name>; %s", value, want)
	case resource+"/" != PreprovisioningDataTemplateReferencePrefix:
		return "", fmt.Errorf("%q names %s, which is not a Metal3PreprovisioningDataTemplate; %s", value, resource, want)
	}
	if problems := validation.IsDNS1123Subdomain(name); len(problems) > 0 {
		return "", fmt.Errorf("%q: %q is not a valid object name (%s); %s", value, name, strings.Join(problems, "; "), want)
	}
	return name, nil
}

// ParseHostAnnotation reads the value of a Metal3Machine's HostAnnotation: "<namespace>/<name>",
// or a bare name in the machine's namespace. set is false for an empty value (no host yet);
// err says what is wrong with any other value that is not a host key.
func ParseHostAnnotation(value, machineNamespace string) (namespace, name string, set bool, err error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return "", "", false, nil
	}
	namespace, name, found := strings.Cut(value, "/")
	if !found {
		return machineNamespace, namespace, true, nil
	}
	if namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", true, fmt.Errorf("annotation %s: %q is not <namespace>/<name>", HostAnnotation, value)
	}
	return namespace, name, true, nil
}
