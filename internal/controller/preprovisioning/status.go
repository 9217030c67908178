package preprovisioning

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// hostView is what the template reconciler knows of one host that references the template.
type hostView struct {
	// Name is the host's name; "<namespace>/<name>" for a host of another namespace.
	Name string
	// Ref is the host's reference annotation, read.
	Ref reference
	// Rendered: the host's Secret, made for this template, exists and the host names it.
	Rendered   bool
	SecretName string
	// Addresses are the addresses in the host's Secret.
	Addresses []string
	// Last is the host's last outcome when it was about this template; nil when unknown.
	Last *outcome
}

// templateStatus is the part of the status that follows from the hosts.
type templateStatus struct {
	Hosts     []infrav1.PreprovisioningHost
	Errors    []infrav1.PreprovisioningHostError
	Condition metav1.Condition
}

// buildStatus decides the template's status from its hosts. A bad reference is reported from the
// annotation itself; a rendered host from its Secret; anything else from its last outcome. A
// host with none of these has not been reconciled yet: it is pending.
func buildStatus(views []hostView) templateStatus {
	var (
		st      templateStatus
		pending []string
	)
	for _, v := range views {
		switch {
		case v.Ref.Err != nil:
			st.Errors = append(st.Errors, infrav1.PreprovisioningHostError{
				Host: v.Name, Reason: infrav1.PreprovisioningBadReferenceReason,
				Message: fmt.Sprintf("annotation %s: %v", refAnnotation, v.Ref.Err),
			})
		case v.Last != nil && v.Last.Reason != "":
			st.Errors = append(st.Errors, infrav1.PreprovisioningHostError{Host: v.Name, Reason: v.Last.Reason, Message: v.Last.Message})
		case v.Rendered:
			st.Hosts = append(st.Hosts, infrav1.PreprovisioningHost{Name: v.Name, SecretName: v.SecretName, Addresses: v.Addresses})
		default:
			pending = append(pending, v.Name)
		}
	}
	slices.SortFunc(st.Hosts, func(a, b infrav1.PreprovisioningHost) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(st.Errors, func(a, b infrav1.PreprovisioningHostError) int { return strings.Compare(a.Host, b.Host) })
	slices.Sort(pending)

	c := metav1.Condition{Type: infrav1.PreprovisioningReadyCondition, Status: metav1.ConditionFalse}
	switch {
	case len(views) == 0:
		c.Reason, c.Message = infrav1.PreprovisioningNoHostsReason,
			"no BareMetalHost references this template; annotate hosts with "+refAnnotation+": "+infrav1.PreprovisioningDataTemplateReferencePrefix+"<this template's name>"
	case len(st.Errors) > 0:
		names := make([]string, 0, len(st.Errors))
		for _, e := range st.Errors {
			names = append(names, e.Host+" ("+e.Reason+")")
		}
		c.Reason, c.Message = infrav1.PreprovisioningHostsFailedReason,
			fmt.Sprintf("%d of %d hosts not rendered: %s; status.errors says why", len(st.Errors), len(views), abbreviate(names))
	case len(pending) > 0:
		c.Reason, c.Message = hostsPendingReason, fmt.Sprintf("%d of %d hosts not reconciled yet: %s", len(pending), len(views), abbreviate(pending))
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, infrav1.PreprovisioningAllHostsRenderedReason, fmt.Sprintf("%d hosts rendered", len(st.Hosts))
	}
	st.Condition = c
	return st
}

// abbreviate lists names for a message, at most ten of them: a template may have thousands.
func abbreviate(names []string) string {
	const most = 10
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:most], ", ") + fmt.Sprintf(" and %d more", len(names)-most)
}

// renderedAddresses reads the static addresses out of a rendered network_data document (YAML
// or JSON), for status.hosts[].addresses.
func renderedAddresses(doc []byte) []string {
	var nd struct {
		Networks []struct {
			IPAddress string `json:"ip_address"`
		} `json:"networks"`
	}
	if err := yaml.Unmarshal(doc, &nd); err != nil {
		return nil
	}
	var out []string
	for _, n := range nd.Networks {
		if n.IPAddress != "" {
			out = append(out, n.IPAddress)
		}
	}
	return out
}

// refAnnotation is the host annotation naming a template, as messages quote it.
const refAnnotation = bmov1.PreprovisioningNetworkDataReferenceAnnotation
