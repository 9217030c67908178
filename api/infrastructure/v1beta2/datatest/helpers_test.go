package datatest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

func ptrTo[T any](v T) *T { return &v }

// newNamespace gives the test a namespace of its own.
func newNamespace(t *testing.T) string { return env.NewNamespace(t) }

// expectRefused asserts that the API server refused an object as invalid, with a cause on
// exactly field whose message contains message: what `kubectl apply` shows the user.
func expectRefused(g Gomega, err error, field, message string) {
	g.ExpectWithOffset(1, err).To(HaveOccurred(), "the API server accepted the object; want %s: %s", field, message)
	g.ExpectWithOffset(1, apierrors.IsInvalid(err)).To(BeTrue(), "want an Invalid error, got %v", err)
	var status apierrors.APIStatus
	g.ExpectWithOffset(1, errors.As(err, &status)).To(BeTrue())
	causes := status.Status().Details.Causes
	for _, c := range causes {
		if c.Field == field && strings.Contains(c.Message, message) {
			return
		}
	}
	g.ExpectWithOffset(1, describeCauses(causes)).To(ContainSubstring(field+": "+message),
		"no cause on the expected field with the expected message")
}

func describeCauses(causes []metav1.StatusCause) string {
	lines := make([]string, 0, len(causes))
	for _, c := range causes {
		lines = append(lines, fmt.Sprintf("%s: %s", c.Field, c.Message))
	}
	return strings.Join(lines, "\n")
}

// validTemplate is a small template that uses every kind of source once; each test case breaks
// one thing in it.
func validTemplate(ns string) *infrav1.Metal3DataTemplate {
	return &infrav1.Metal3DataTemplate{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "tpl-", Namespace: ns},
		Spec: infrav1.Metal3DataTemplateSpec{
			ClusterName: "cluster-a",
			MetaData: &infrav1.MetaData{
				Strings:     []infrav1.MetaDataString{{Key: "role", Value: "worker"}},
				ObjectNames: []infrav1.MetaDataObjectName{{Key: "name", Object: infrav1.ObjectMachine}},
				Indexes:     []infrav1.MetaDataIndex{{Key: "hostname", Prefix: "node-"}},
				IPAddresses: []infrav1.MetaDataIPAddress{{Key: "bmc", Subnet: ptrTo(infrav1.IPSubnet("192.168.10.0/24"))}},
				Namespaces:  []infrav1.MetaDataNamespace{{Key: "namespace"}},
				IPAddressesFromPool: []infrav1.FromPool{
					{Key: "ip", Name: "pool-v4"},
				},
				FromHostInterfaces: []infrav1.MetaDataHostInterface{{Key: "mac", Interface: "eno1"}},
				FromLabels:         []infrav1.MetaDataFromLabel{{Key: "rack", Object: infrav1.ObjectBareMetalHost, Label: "rack"}},
				FromAnnotations: []infrav1.MetaDataFromAnnotation{
					{Key: "owner", Object: infrav1.ObjectMetal3Machine, Annotation: "example.com/owner"},
				},
			},
			NetworkData: &infrav1.NetworkData{
				Links: &infrav1.NetworkDataLinks{
					Ethernets: []infrav1.NetworkDataLinkEthernet{
						{Type: "phy", ID: "eno1", MACAddress: &infrav1.NetworkLinkEthernetMac{FromHostInterface: ptrTo("eno1")}},
					},
				},
				Networks: &infrav1.NetworkDataNetworks{
					IPv4: []infrav1.NetworkDataIPv4{{
						ID: "provisioning", Link: "eno1", IPAddressFromIPPool: "pool-v4",
						Routes: []infrav1.NetworkDataRoutev4{{
							Network: "0.0.0.0",
							Gateway: infrav1.NetworkGatewayv4{FromIPPool: ptrTo("pool-v4")},
						}},
					}},
					IPv6: []infrav1.NetworkDataIPv6{{
						ID: "provisioning-v6", Link: "eno1", IPAddressFromIPPool: "pool-v6",
						Routes: []infrav1.NetworkDataRoutev6{{
							Network: "::",
							Gateway: infrav1.NetworkGatewayv6{String: ptrTo(infrav1.IPv6Address("2001:db8::1"))},
						}},
					}},
				},
				Services: &infrav1.NetworkDataService{DNS: []infrav1.IPAddress{"192.168.0.53", "2001:db8::53"}},
			},
		},
	}
}

func ethernet(id string) infrav1.NetworkDataLinkEthernet {
	return infrav1.NetworkDataLinkEthernet{
		Type: "phy", ID: infrav1.LinkID(id),
		MACAddress: &infrav1.NetworkLinkEthernetMac{FromHostInterface: ptrTo(id)},
	}
}

// withLinks replaces the template's links; networks stay on eno1, so keep an eno1.
func withLinks(links infrav1.NetworkDataLinks) func(*infrav1.Metal3DataTemplate) {
	return func(m *infrav1.Metal3DataTemplate) { m.Spec.NetworkData.Links = &links }
}

func validData(ns string) *infrav1.Metal3Data {
	return &infrav1.Metal3Data{
		ObjectMeta: metav1.ObjectMeta{Name: "tpl-3", Namespace: ns},
		Spec: infrav1.Metal3DataSpec{
			Index:    ptr.To[int32](3),
			Claim:    corev1.ObjectReference{Name: "machine-a", Namespace: ns, Kind: "Metal3DataClaim"},
			Template: corev1.ObjectReference{Name: "tpl", Namespace: ns, Kind: "Metal3DataTemplate"},
			MetaData: &corev1.SecretReference{Name: "machine-a-metadata-3", Namespace: ns},
		},
	}
}

func validClaim(ns string) *infrav1.Metal3DataClaim {
	return &infrav1.Metal3DataClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "machine-a", Namespace: ns},
		Spec: infrav1.Metal3DataClaimSpec{
			Template: corev1.ObjectReference{Name: "tpl", Namespace: ns, Kind: "Metal3DataTemplate"},
		},
	}
}

func validPreprovisioningTemplate(ns string) *infrav1.Metal3PreprovisioningDataTemplate {
	return &infrav1.Metal3PreprovisioningDataTemplate{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "preprov-", Namespace: ns},
		Spec: infrav1.Metal3PreprovisioningDataTemplateSpec{
			PreprovisioningNetworkData: &infrav1.NetworkData{
				Links: &infrav1.NetworkDataLinks{
					Ethernets: []infrav1.NetworkDataLinkEthernet{{
						Type: "phy", ID: "boot",
						MACAddress: &infrav1.NetworkLinkEthernetMac{FromBootMAC: ptr.To(true)},
					}},
				},
				Networks: &infrav1.NetworkDataNetworks{
					IPv4: []infrav1.NetworkDataIPv4{{
						ID: "boot", Link: "boot", IPAddressFromIPPool: "preprovisioning",
						Routes: []infrav1.NetworkDataRoutev4{{
							Network: "0.0.0.0",
							Gateway: infrav1.NetworkGatewayv4{FromIPPool: ptrTo("preprovisioning")},
						}},
					}},
				},
			},
		},
	}
}
