package datatest

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
)

// TestDataTemplateRoundTrip stores a template that leaves every defaulted field unset and reads
// back exactly what was sent plus the documented defaults: mtu 1500 on every link, step 1.
func TestDataTemplateRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sent := validTemplate(newNamespace(t))
	sent.Spec.NetworkData.Links = &infrav1.NetworkDataLinks{
		Ethernets: []infrav1.NetworkDataLinkEthernet{ethernet("eno1"), ethernet("eno2"), ethernet("eno3")},
		Bonds: []infrav1.NetworkDataLinkBond{{
			ID: "bond0", BondMode: "802.3ad", BondXmitHashPolicy: "layer3+4", BondLinks: []infrav1.LinkID{"eno2", "eno3"},
			Parameters: []infrav1.NetworkDataLinkBondParam{
				{Name: "miimon", Value: &apiextensionsv1.JSON{Raw: []byte(`100`)}},
				{Name: "lacp_rate", Value: &apiextensionsv1.JSON{Raw: []byte(`"fast"`)}},
			},
		}},
		Vlans:   []infrav1.NetworkDataLinkVlan{{ID: "bond0.100", VlanID: ptr.To[int32](100), VlanLink: "bond0"}},
		Bridges: []infrav1.NetworkDataLinkBridge{{ID: "br0", BridgeLinks: []infrav1.LinkID{"bond0.100"}, AcceptRA: ptrTo(false)}},
	}
	sent.Spec.NetworkData.Networks.IPv4 = append(sent.Spec.NetworkData.Networks.IPv4, infrav1.NetworkDataIPv4{
		ID: "storage", Link: "bond0.100", Netmask: ptrTo(int32(24)),
		IPAddress: &infrav1.NetworkDataIPAddress{Start: ptrTo(infrav1.IPAddress("10.0.0.10"))},
	})
	created := sent.DeepCopy()
	g.Expect(env.Client.Create(ctx, created)).To(Succeed())

	want := sent.Spec.DeepCopy()
	links := want.NetworkData.Links
	for i := range links.Ethernets {
		links.Ethernets[i].MTU = 1500
	}
	links.Bonds[0].MTU = 1500
	links.Vlans[0].MTU = 1500
	links.Bridges[0].MTU = 1500
	want.MetaData.Indexes[0].Step = 1
	want.MetaData.IPAddresses[0].Step = 1
	want.NetworkData.Networks.IPv4[1].IPAddress.Step = 1
	for _, pools := range [][]infrav1.FromPool{want.MetaData.IPAddressesFromPool, want.MetaData.PrefixesFromPool, want.MetaData.GatewaysFromPool, want.MetaData.DNSServersFromPool} {
		for i := range pools {
			if pools[i].APIGroup == "" {
				pools[i].APIGroup, pools[i].Kind = "ipam.metal3.io", "IPPool" // upstream's defaults
			}
		}
	}

	got := &infrav1.Metal3DataTemplate{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(created), got)).To(Succeed())
	g.Expect(got.Spec).To(Equal(*want))
}

func readyCondition(reason string) metav1.Condition {
	return metav1.Condition{
		Type: "Ready", Status: metav1.ConditionFalse, Reason: reason,
		Message:            "IPClaim machine-a-pool-v4 has no address yet",
		LastTransitionTime: metav1.Now().Rfc3339Copy(),
	}
}

// TestDataRoundTrip stores a Metal3Data and its status as the controllers write them and reads
// both back unchanged.
func TestDataRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sent := validData(newNamespace(t))
	sent.Spec.Index = ptr.To[int32](0) // omitted from the JSON: must still read back as 0
	sent.Spec.NetworkData = &corev1.SecretReference{Name: "machine-a-networkdata-0", Namespace: sent.Namespace}
	created := sent.DeepCopy()
	g.Expect(env.Client.Create(ctx, created)).To(Succeed())

	now := metav1.Now().Rfc3339Copy()
	created.Status = infrav1.Metal3DataStatus{
		Ready:        false,
		ErrorMessage: ptrTo("pool pool-v4 has no free address; grow the pool or delete unused IPClaims"),
		Conditions:   []metav1.Condition{readyCondition(infrav1.DataWaitingForIPAddressesReason)},
		LastUpdated:  &now,
	}
	wantStatus := created.Status.DeepCopy()
	g.Expect(env.Client.Status().Update(ctx, created)).To(Succeed())

	got := &infrav1.Metal3Data{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(created), got)).To(Succeed())
	g.Expect(got.Spec).To(Equal(sent.Spec))
	expectSemanticallyEqual(g, got.Status, *wantStatus)
}

func TestDataClaimRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sent := validClaim(newNamespace(t))
	created := sent.DeepCopy()
	g.Expect(env.Client.Create(ctx, created)).To(Succeed())

	created.Status = infrav1.Metal3DataClaimStatus{
		RenderedData: &corev1.ObjectReference{Name: "tpl-0", Namespace: sent.Namespace, Kind: "Metal3Data"},
		Conditions:   []metav1.Condition{readyCondition(infrav1.DataClaimWaitingForDataReason)},
	}
	wantStatus := created.Status.DeepCopy()
	g.Expect(env.Client.Status().Update(ctx, created)).To(Succeed())

	got := &infrav1.Metal3DataClaim{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(created), got)).To(Succeed())
	g.Expect(got.Spec).To(Equal(sent.Spec))
	expectSemanticallyEqual(g, got.Status, *wantStatus)
}

func TestPreprovisioningTemplateRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	sent := validPreprovisioningTemplate(newNamespace(t))
	sent.Spec.ClusterName = "cluster-a"
	created := sent.DeepCopy()
	g.Expect(env.Client.Create(ctx, created)).To(Succeed())

	now := metav1.Now().Rfc3339Copy()
	created.Status = infrav1.Metal3PreprovisioningDataTemplateStatus{
		Hosts: []infrav1.PreprovisioningHost{{
			Name: "host-0", SecretName: "host-0" + infrav1.PreprovisioningSecretSuffix, Addresses: []string{"192.168.0.10"},
		}},
		Errors: []infrav1.PreprovisioningHostError{{
			Host: "host-1", Reason: infrav1.PreprovisioningBadReferenceReason,
			Message: "annotation names metal3datatemplates.infrastructure.cluster.x-k8s.io/t; name a metal3preprovisioningdatatemplate",
		}},
		Rendered:    1,
		Failed:      1,
		Conditions:  []metav1.Condition{readyCondition(infrav1.PreprovisioningHostsFailedReason)},
		LastUpdated: &now,
	}
	wantStatus := created.Status.DeepCopy()
	g.Expect(env.Client.Status().Update(ctx, created)).To(Succeed())

	want := sent.Spec.DeepCopy()
	want.PreprovisioningNetworkData.Links.Ethernets[0].MTU = 1500
	got := &infrav1.Metal3PreprovisioningDataTemplate{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(created), got)).To(Succeed())
	g.Expect(got.Spec).To(Equal(*want))
	expectSemanticallyEqual(g, got.Status, *wantStatus)
}

// expectSemanticallyEqual compares as the API server does: times by instant, not by location.
func expectSemanticallyEqual(g Gomega, got, want any) {
	g.ExpectWithOffset(1, equality.Semantic.DeepEqual(got, want)).To(BeTrue(), "got\n%+v\nwant\n%+v", got, want)
}
