package datatest

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

const (
	preprovMACMsg  = "macAddress.fromAnnotation.object must be baremetalhost: before provisioning there is no Machine or Metal3Machine to read an annotation from"
	preprovPoolMsg = "fromPoolAnnotation.object must be baremetalhost: before provisioning there is no Machine or Metal3Machine to read an annotation from"
)

func TestDataRefusesInvalidFields(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name    string
		given   func(*infrav1.Metal3Data)
		field   string
		message string
	}{
		{
			name:  "no claim name",
			given: func(d *infrav1.Metal3Data) { d.Spec.Claim.Name = "" },
			field: "spec.claim", message: "claim.name is required: name the Metal3DataClaim, in the same namespace",
		},
		{
			name:  "no template name",
			given: func(d *infrav1.Metal3Data) { d.Spec.Template.Name = "" },
			field: "spec.template", message: "template.name is required: name the Metal3DataTemplate, in the same namespace",
		},
		{
			name:  "negative index",
			given: func(d *infrav1.Metal3Data) { d.Spec.Index = ptr.To[int32](-1) },
			field: "spec.index", message: "should be greater than or equal to 0",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			d := validData(ns)
			d.Name = ""
			d.GenerateName = "data-"
			tc.given(d)
			expectRefused(g, env.Client.Create(context.Background(), d), tc.field, tc.message)
		})
	}
}

func TestDataRefusesEmptyErrorMessage(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	d := validData(newNamespace(t))
	g.Expect(env.Client.Create(ctx, d)).To(Succeed())

	// An empty message would say there is an error without saying what it is.
	d.Status.ErrorMessage = ptrTo("")
	expectRefused(g, env.Client.Status().Update(ctx, d), "status.errorMessage", "should be at least 1 chars long")
}

func TestDataClaimRefusesMissingTemplateName(t *testing.T) {
	g := NewWithT(t)
	c := validClaim(newNamespace(t))
	c.Spec.Template.Name = ""
	expectRefused(g, env.Client.Create(context.Background(), c), "spec.template",
		"template.name is required: name the Metal3DataTemplate, in the claim's namespace, to take an index from")
}

func TestPreprovisioningTemplateRefusesInvalidFields(t *testing.T) {
	ns := newNamespace(t)
	const links = "spec.preprovisioningNetworkData.links"
	const networks = "spec.preprovisioningNetworkData.networks"
	byAnnotation := func(object string) *infrav1.FromPoolAnnotation {
		return &infrav1.FromPoolAnnotation{Object: object, Annotation: "example.com/pool"}
	}
	cases := []struct {
		name    string
		given   func(*infrav1.Metal3PreprovisioningDataTemplate)
		field   string
		message string
	}{
		{
			name:  "no network data",
			given: func(p *infrav1.Metal3PreprovisioningDataTemplate) { p.Spec.PreprovisioningNetworkData = nil },
			field: "spec.preprovisioningNetworkData", message: "Required value",
		},
		{
			name: "ethernet MAC from a Machine annotation",
			given: func(p *infrav1.Metal3PreprovisioningDataTemplate) {
				p.Spec.PreprovisioningNetworkData.Links.Ethernets[0].MACAddress = &infrav1.NetworkLinkEthernetMac{
					FromAnnotation: &infrav1.NetworkLinkEthernetMacFromAnnotation{Object: infrav1.ObjectMachine, Annotation: "example.com/mac"},
				}
			},
			field: links, message: preprovMACMsg,
		},
		{
			name: "VLAN MAC from a Metal3Machine annotation",
			given: func(p *infrav1.Metal3PreprovisioningDataTemplate) {
				p.Spec.PreprovisioningNetworkData.Links.Vlans = []infrav1.NetworkDataLinkVlan{{
					ID: "vlan5", VlanID: ptr.To[int32](5), VlanLink: "boot",
					MACAddress: &infrav1.NetworkLinkEthernetMac{
						FromAnnotation: &infrav1.NetworkLinkEthernetMacFromAnnotation{Object: infrav1.ObjectMetal3Machine, Annotation: "example.com/mac"},
					},
				}}
			},
			field: links, message: preprovMACMsg,
		},
		{
			name: "static address from a pool named on the Machine",
			given: func(p *infrav1.Metal3PreprovisioningDataTemplate) {
				p.Spec.PreprovisioningNetworkData.Networks.IPv4[0].FromPoolAnnotation = byAnnotation(infrav1.ObjectMachine)
			},
			field: networks, message: preprovPoolMsg,
		},
		{
			name: "DHCP route gateway from a pool named on the Metal3Machine",
			given: func(p *infrav1.Metal3PreprovisioningDataTemplate) {
				p.Spec.PreprovisioningNetworkData.Networks.IPv6DHCP = []infrav1.NetworkDataIPv6DHCP{{
					ID: "dhcp6", Link: "boot",
					Routes: []infrav1.NetworkDataRoutev6{{
						Network: "::", Gateway: infrav1.NetworkGatewayv6{FromPoolAnnotation: byAnnotation(infrav1.ObjectMetal3Machine)},
					}},
				}}
			},
			field: networks, message: preprovPoolMsg,
		},
		{
			name: "the networkData rules apply too: network on a missing link",
			given: func(p *infrav1.Metal3PreprovisioningDataTemplate) {
				p.Spec.PreprovisioningNetworkData.Networks.IPv4[0].Link = "eno1"
			},
			field: networks, message: "every network's link must name a link in networkData.links",
		},
		{
			name: "the networkData rules apply too: MAC with no source",
			given: func(p *infrav1.Metal3PreprovisioningDataTemplate) {
				p.Spec.PreprovisioningNetworkData.Links.Ethernets[0].MACAddress = &infrav1.NetworkLinkEthernetMac{}
			},
			field: links + ".ethernets[0].macAddress", message: macMsg,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewWithT(t)
			p := validPreprovisioningTemplate(ns)
			tc.given(p)
			expectRefused(g, env.Client.Create(context.Background(), p), tc.field, tc.message)
		})
	}
}

func TestPreprovisioningTemplateAcceptsHostSources(t *testing.T) {
	g := NewWithT(t)
	p := validPreprovisioningTemplate(newNamespace(t))
	nd := p.Spec.PreprovisioningNetworkData
	nd.Links.Ethernets = append(nd.Links.Ethernets,
		infrav1.NetworkDataLinkEthernet{Type: "phy", ID: "eno2", MACAddress: &infrav1.NetworkLinkEthernetMac{
			FromAnnotation: &infrav1.NetworkLinkEthernetMacFromAnnotation{Object: infrav1.ObjectBareMetalHost, Annotation: "example.com/mac"},
		}},
		infrav1.NetworkDataLinkEthernet{Type: "phy", ID: "eno3", MACAddress: &infrav1.NetworkLinkEthernetMac{FromHostInterface: ptrTo("eno3")}},
	)
	nd.Networks.IPv4[0].FromPoolAnnotation = &infrav1.FromPoolAnnotation{Object: infrav1.ObjectBareMetalHost, Annotation: "example.com/pool"}
	nd.Networks.IPv4[0].Routes[0].Gateway.FromPoolAnnotation = &infrav1.FromPoolAnnotation{Object: infrav1.ObjectBareMetalHost, Annotation: "example.com/pool"}
	g.Expect(env.Client.Create(context.Background(), p)).To(Succeed())
}
