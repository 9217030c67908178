package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1 "github.com/metalwire/metalwire/api/baremetal/v1alpha1"
	infrav1 "github.com/metalwire/metalwire/api/infrastructure/v1beta2"
	ipamv1 "github.com/metalwire/metalwire/api/ipam/v1alpha1"
	"github.com/metalwire/metalwire/internal/controller"
	"github.com/metalwire/metalwire/internal/testenv"
	"github.com/metalwire/metalwire/pkg/render"
)

// chainTemplate renders an address from the set's pool into both the metadata and the network
// data of NIC eno1.
const chainTemplate = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: x}
spec:
  metaData:
    ipAddressesFromPool: [{key: ip, name: %[1]s}]
  networkData:
    links:
      ethernets: [{type: phy, id: eno1, macAddress: {fromHostInterface: eno1}}]
    networks:
      ipv4: [{id: prov, link: eno1, ipAddressFromIPPool: %[1]s}]
`

// TestWatchFilterServesTheLabelledMachineToItsSecrets: two teams share a namespace, each with a
// Cluster, a machine with a data template, a pool and a free host, all labelled with its own
// watch-filter value. A manager started with --watch-filter=team-a takes team-a's machine all
// the way: it claims a host, makes the Metal3DataClaim, the Metal3Data, the IPClaim, gets an
// address and writes the Secrets, each object carrying team-a's label. Team-b's objects,
// including a claim, a Metal3Data and IPClaims made by hand (one of them on team-a's pool), are
// never written: same resourceVersion, no Secret, no IPAddress, no host claimed.
func TestWatchFilterServesTheLabelledMachineToItsSecrets(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	startFilteredManager(t, env, []controller.Group{controller.Infrastructure, controller.IPAM}, "team-a")
	ns := env.NewNamespace(t)
	create := func(o client.Object) {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "creating %T %s", o, o.GetName())
	}

	// One team's objects, as Cluster API and the user leave them.
	type set struct {
		m3m  *infrav1.Metal3Machine
		tmpl *infrav1.Metal3DataTemplate
		pool *ipamv1.IPPool
		host *bmov1.BareMetalHost
		rem  *infrav1.Metal3Remediation
	}
	makeSet := func(name, team, firstIP string) set {
		watch := map[string]string{clusterv1.WatchLabel: team, clusterv1.ClusterNameLabel: name}
		cluster := &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.WatchLabel: team}},
			Spec: clusterv1.ClusterSpec{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: name},
			},
		}
		create(cluster)
		cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		g.Expect(env.Client.Status().Update(ctx, cluster)).To(Succeed())
		create(&infrav1.Metal3Cluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: watch},
			Spec:       infrav1.Metal3ClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "192.168.111.249", Port: 6443}},
		})

		pool := &ipamv1.IPPool{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-pool", Labels: watch},
			Spec: ipamv1.IPPoolSpec{
				NamePrefix: name + "-pool", Prefix: 24,
				Pools: []ipamv1.Pool{{Start: ptr.To(ipamv1.IPAddressStr(firstIP)), End: ptr.To(ipamv1.IPAddressStr(firstIP))}},
			},
		}
		create(pool)
		decoded, err := render.DecodeTemplate(fmt.Appendf(nil, chainTemplate, pool.Name))
		g.Expect(err).NotTo(HaveOccurred())
		tmpl := &infrav1.Metal3DataTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-tmpl", Labels: watch},
			Spec:       infrav1.Metal3DataTemplateSpec{ClusterName: name, MetaData: decoded.MetaData, NetworkData: decoded.NetworkData},
		}
		create(tmpl)

		host := &bmov1.BareMetalHost{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-host", Labels: map[string]string{"example.com/team": team}},
			Spec:       bmov1.BareMetalHostSpec{BootMACAddress: "00:11:22:33:44:55"},
		}
		create(host)
		host.Status.OperationalStatus = bmov1.OperationalStatusOK
		host.Status.Provisioning.State = bmov1.StateAvailable
		host.Status.HardwareDetails = &bmov1.HardwareDetails{NIC: []bmov1.NIC{{Name: "eno1", MAC: "00:11:22:33:44:55"}}}
		g.Expect(env.Client.Status().Update(ctx, host)).To(Succeed())

		create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-bootstrap"}, StringData: map[string]string{"value": "#cloud-config"}})
		machine := func(machineName string) *clusterv1.Machine {
			m := &clusterv1.Machine{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: machineName, Labels: watch},
				Spec: clusterv1.MachineSpec{
					ClusterName: name,
					Bootstrap: clusterv1.Bootstrap{
						ConfigRef:      clusterv1.ContractVersionedObjectReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig", Name: machineName},
						DataSecretName: ptr.To(name + "-bootstrap"),
					},
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: machineName},
				},
			}
			create(m)
			return m
		}
		m := machine(name + "-0")
		m3m := &infrav1.Metal3Machine{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: ns, Name: m.Name, Labels: watch,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}},
			},
			Spec: infrav1.Metal3MachineSpec{
				Image:        infrav1.Image{URL: "http://images.example.com/ubuntu.qcow2", Checksum: ptr.To("0123456789abcdef")},
				HostSelector: infrav1.HostSelector{MatchLabels: map[string]string{"example.com/team": team}},
				DataTemplate: &corev1.ObjectReference{Name: tmpl.Name},
			},
		}
		create(m3m)

		// A remediation MachineHealthCheck made for a Machine whose Metal3Machine is missing:
		// the controller, when it acts, says so in a condition.
		spare := machine(name + "-spare")
		rem := &infrav1.Metal3Remediation{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: ns, Name: spare.Name, Labels: watch,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: spare.Name, UID: spare.UID}},
			},
			Spec: infrav1.Metal3RemediationSpec{Strategy: &infrav1.RemediationStrategy{Type: infrav1.RebootRemediationStrategy, RetryLimit: 1, TimeoutSeconds: 300}},
		}
		create(rem)
		return set{m3m: m3m, tmpl: tmpl, pool: pool, host: host, rem: rem}
	}
	ours := makeSet("ours", "team-a", "192.168.10.10")
	theirs := makeSet("theirs", "team-b", "192.168.20.10")

	// What team-b's own manager would have made by now, made by hand: none of it is ours to touch.
	teamB := map[string]string{clusterv1.WatchLabel: "team-b", clusterv1.ClusterNameLabel: "theirs"}
	theirClaim := &infrav1.Metal3DataClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "theirs-by-hand", Labels: teamB},
		Spec:       infrav1.Metal3DataClaimSpec{Template: corev1.ObjectReference{Name: theirs.tmpl.Name}},
	}
	create(theirClaim)
	theirData := &infrav1.Metal3Data{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "theirs-tmpl-7", Labels: teamB},
		Spec: infrav1.Metal3DataSpec{
			Index:    ptr.To[int32](7),
			Claim:    corev1.ObjectReference{Name: theirClaim.Name, Namespace: ns},
			Template: corev1.ObjectReference{Name: theirs.tmpl.Name, Namespace: ns},
		},
	}
	create(theirData)
	ipClaim := func(name, pool string) *ipamv1.IPClaim {
		c := &ipamv1.IPClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: teamB},
			Spec:       ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: pool, Namespace: ns}},
		}
		create(c)
		return c
	}
	theirIPClaim := ipClaim("theirs-by-hand", theirs.pool.Name)
	// On team-a's pool, which has one address: had it been served, team-a's machine would wait.
	strayIPClaim := ipClaim("theirs-on-our-pool", ours.pool.Name)

	// Team-a: served to the Secrets, every object made for it labelled team-a.
	teamA := HaveKeyWithValue(clusterv1.WatchLabel, "team-a")
	var data *infrav1.Metal3Data
	g.Eventually(func(g Gomega) {
		claim := &infrav1.Metal3DataClaim{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ours.m3m), claim)).To(Succeed(), "the machine's Metal3DataClaim")
		g.Expect(claim.Labels).To(teamA)
		g.Expect(claim.Status.RenderedData).NotTo(BeNil(), "claim status: %+v", claim.Status)
		data = &infrav1.Metal3Data{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim.Status.RenderedData.Name}, data)).To(Succeed())
		g.Expect(data.Labels).To(teamA)
		g.Expect(data.Status.Ready).To(BeTrue(), "Metal3Data status: %+v", data.Status)
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())

	ipClaims := &ipamv1.IPClaimList{}
	g.Expect(env.Client.List(ctx, ipClaims, client.InNamespace(ns))).To(Succeed())
	var ourIPClaims []ipamv1.IPClaim
	for _, c := range ipClaims.Items {
		if metav1.IsControlledBy(&c, data) {
			ourIPClaims = append(ourIPClaims, c)
		}
	}
	g.Expect(ourIPClaims).To(HaveLen(1), "one IPClaim for the one pool")
	g.Expect(ourIPClaims[0].Labels).To(teamA)
	g.Expect(ourIPClaims[0].Status.Address).NotTo(BeNil())
	for _, ref := range []*corev1.SecretReference{data.Spec.MetaData, data.Spec.NetworkData} {
		g.Expect(ref).NotTo(BeNil())
		s := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, s)).To(Succeed())
	}
	meta := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: data.Spec.MetaData.Name}, meta)).To(Succeed())
	g.Expect(string(meta.Data[infrav1.DataSecretMetaDataKey])).To(ContainSubstring("192.168.10.10"))
	g.Eventually(func(g Gomega) {
		rem := &infrav1.Metal3Remediation{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ours.rem), rem)).To(Succeed())
		g.Expect(rem.Status.Conditions).NotTo(BeEmpty(), "team-a's remediation was not acted on")
	}, time.Minute, 200*time.Millisecond).Should(Succeed())

	// Team-b: nothing written, nothing made.
	untouched := []client.Object{
		theirs.m3m, theirs.tmpl, theirs.pool, theirs.host, theirs.rem,
		theirClaim, theirData, theirIPClaim, strayIPClaim,
	}
	versions := map[client.Object]string{}
	for _, o := range untouched {
		versions[o] = o.GetResourceVersion()
	}
	g.Consistently(func(g Gomega) {
		for _, o := range untouched {
			got := o.DeepCopyObject().(client.Object)
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), got)).To(Succeed())
			g.Expect(got.GetResourceVersion()).To(Equal(versions[o]), "%T %s was written: finalizers %v", o, o.GetName(), got.GetFinalizers())
		}
		// No claim for team-b's machine, no Metal3Data for its claims.
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(theirs.m3m), &infrav1.Metal3DataClaim{}))).To(BeTrue(),
			"a Metal3DataClaim was made for team-b's machine")
		all := &infrav1.Metal3DataList{}
		g.Expect(env.Client.List(ctx, all, client.InNamespace(ns))).To(Succeed())
		for _, d := range all.Items {
			g.Expect(d.Name == theirData.Name || d.Labels[clusterv1.WatchLabel] == "team-a").To(BeTrue(), "Metal3Data %s made for team-b", d.Name)
		}
		// Every IPAddress is team-a's, and no Secret was rendered for team-b.
		addrs := &ipamv1.IPAddressList{}
		g.Expect(env.Client.List(ctx, addrs, client.InNamespace(ns))).To(Succeed())
		g.Expect(addrs.Items).To(HaveLen(1))
		g.Expect(addrs.Items[0].Spec.Claim.Name).To(Equal(ourIPClaims[0].Name))
		secrets := &corev1.SecretList{}
		g.Expect(env.Client.List(ctx, secrets, client.InNamespace(ns))).To(Succeed())
		var names []string
		for _, s := range secrets.Items {
			names = append(names, s.Name)
		}
		g.Expect(names).To(ConsistOf("ours-bootstrap", "theirs-bootstrap", data.Spec.MetaData.Name, data.Spec.NetworkData.Name))
	}, 5*time.Second, 250*time.Millisecond).Should(Succeed())
}
