package release

import (
	"context"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctl "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/metalwire/metalwire/internal/testenv"
)

// TestClusterctlUpgradePlan: with v0.1.0 installed (clusterctl's inventory says so) and v0.1.0
// and v0.2.0 in a local repository, `clusterctl upgrade plan` offers v0.2.0 under contract
// v1beta2, reading both releases' metadata.yaml through clusterctl's own library. Cluster API's
// core provider is in the repository too (one metadata.yaml): clusterctl plans per core provider.
func TestClusterctlUpgradePlan(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })

	dir := t.TempDir()
	// v0.1.0 as released today; v0.2.0 as it would be with its series added.
	g.Expect(makeArtifacts(t).Write(filepath.Join(dir, "infrastructure-"+ProviderName, "v0.1.0"))).To(Succeed())
	next := makeArtifacts(t)
	saved := ReleaseSeries
	ReleaseSeries = append(append([]Series(nil), saved...), Series{Major: 0, Minor: 2, Contract: "v1beta2"})
	next.Metadata = Metadata()
	ReleaseSeries = saved
	g.Expect(next.Write(filepath.Join(dir, "infrastructure-"+ProviderName, "v0.2.0"))).To(Succeed())
	cfg := clusterctlConfig(t, dir)

	// What clusterctl init would have left: its inventory, a Provider object per provider.
	c, err := clusterctl.New(ctx, cfg)
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(writeAdminKubeconfig(kubeconfig, releasedVersionProxy(t, env.Config).URL)).To(Succeed())
	_, err = c.PlanUpgrade(ctx, clusterctl.PlanUpgradeOptions{Kubeconfig: clusterctl.Kubeconfig{Path: kubeconfig}})
	g.Expect(err).To(HaveOccurred(), "no provider is installed yet") // and the inventory CRD now is
	s := runtime.NewScheme()
	g.Expect(clusterctlv1.AddToScheme(s)).To(Succeed())
	g.Expect(corev1.AddToScheme(s)).To(Succeed())
	inv, err := client.New(env.Config, client.Options{Scheme: s})
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range []clusterctlv1.Provider{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "capi-system", Name: "cluster-api"}, ProviderName: "cluster-api", Type: string(clusterctlv1.CoreProviderType), Version: "v1.14.2"},
		{ObjectMeta: metav1.ObjectMeta{Namespace: installNamespace, Name: "infrastructure-" + ProviderName}, ProviderName: ProviderName, Type: string(clusterctlv1.InfrastructureProviderType), Version: "v0.1.0"},
	} {
		g.Expect(client.IgnoreAlreadyExists(inv.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace}}))).To(Succeed())
		p.Labels = map[string]string{clusterctlv1.ClusterctlLabel: "", "cluster.x-k8s.io/provider": p.ManifestLabel()}
		g.Expect(inv.Create(ctx, &p)).To(Succeed())
	}

	plans, err := c.PlanUpgrade(ctx, clusterctl.PlanUpgradeOptions{Kubeconfig: clusterctl.Kubeconfig{Path: kubeconfig}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plans).To(HaveLen(1))
	g.Expect(plans[0].Contract).To(Equal("v1beta2"))
	nextVersion := map[string]string{}
	for _, p := range plans[0].Providers {
		nextVersion[p.ProviderName] = p.NextVersion
	}
	g.Expect(nextVersion).To(Equal(map[string]string{"cluster-api": "", ProviderName: "v0.2.0"}), "metalwire upgrades to v0.2.0; cluster-api has nothing newer")
}
