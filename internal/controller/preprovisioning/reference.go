package preprovisioning

import (
	"fmt"
	"strings"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// reference is what a host's reference annotation says.
type reference struct {
	// Template is the name of the template in the host's namespace; empty when Err is set.
	Template string
	// Key is the template the host meant, as "<namespace>/<name>", even when the value is
	// wrong: the template of that name lists the host's error in its status, where the user
	// looks. Empty when nothing names a template (an empty value).
	Key string
	// Err says what is wrong with the value and what to write instead.
	Err error
}

// valid tells whether the annotation names a template of the host's namespace. A wrong value
// is the user's to fix, reported in status and events, not a reconcile failure.
func (r reference) valid() bool { return r.Err == nil }

// referenceOf reads a host's reference annotation; ok is false when the host has none.
func referenceOf(host *bmov1.BareMetalHost) (reference, bool) {
	value, ok := host.Annotations[bmov1.PreprovisioningNetworkDataReferenceAnnotation]
	if !ok {
		return reference{}, false
	}
	return parseReference(host.Namespace, value), true
}

// parseReference reads the value of the reference annotation of a host in namespace ns.
func parseReference(ns, value string) reference {
	value = strings.TrimSpace(value)
	if rest, ok := strings.CutPrefix(value, infrav1.PreprovisioningDataTemplateReferencePrefix); ok {
		// <prefix><namespace>/<name>: the proposal's format has no namespace, and a host may
		// only use a template of its own namespace (a template is not a cluster-wide object).
		if other, name, cross := strings.Cut(rest, "/"); cross && other != "" && name != "" && !strings.Contains(name, "/") {
			return reference{
				Key: other + "/" + name,
				Err: fmt.Errorf("%q names a template in namespace %s, but templates are only looked up in the host's namespace %s; create the template in %s and write %s%s",
					value, other, ns, ns, infrav1.PreprovisioningDataTemplateReferencePrefix, name),
			}
		}
	}
	name, err := infrav1.ParsePreprovisioningReference(value)
	if err != nil {
		return reference{Key: guessKey(ns, value), Err: err}
	}
	return reference{Template: name, Key: ns + "/" + name}
}

// guessKey is the template a wrong value most likely meant: the text after the last slash, or
// the whole value when it has none (a bare template name).
func guessKey(ns, value string) string {
	name := value
	if i := strings.LastIndex(value, "/"); i >= 0 {
		name = value[i+1:]
	}
	if name == "" {
		return ""
	}
	return ns + "/" + name
}
