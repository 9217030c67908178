package main

import (
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

func TestMigrateToV1beta1(t *testing.T) {
	g := NewWithT(t)
	stdout, stderr, code := runMigrate("", "--to", "v1beta1", "-f", filepath.Join(seedFixtures, "000-02-metal3cluster.yaml"))
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(stdout).To(ContainSubstring("apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\n"))
	g.Expect(stdout).To(ContainSubstring("cloudProviderEnabled: false"))
	g.Expect(stdout).NotTo(ContainSubstring("status:"))
	g.Expect(stderr).To(ContainSubstring("Metal3Cluster/m3cluster: apiVersion: infrastructure.cluster.x-k8s.io/v1beta2 -> infrastructure.cluster.x-k8s.io/v1beta1"))

	// A field v1beta1 has no place for: the user must decide.
	stdout, stderr, code = runMigrate(`apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: Metal3DataTemplate
metadata: {name: t}
spec:
  clusterName: c
  metaData:
    ipAddresses:
      - key: ip
        start: 192.168.0.10
        end: 192.168.0.20
        subnet: 192.168.0.0/24
`, "--to", "v1beta1", "-f", "-")
	g.Expect(code).To(Equal(1), stderr)
	g.Expect(stdout).To(ContainSubstring("apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\n"))
	g.Expect(stdout).NotTo(ContainSubstring("ipAddresses"))
	g.Expect(stderr).To(ContainSubstring("must change: Metal3DataTemplate/t: spec.metaData.ipAddresses: CAPM3's v1beta1 has no place for this field"))

	_, stderr, code = runMigrate("", "--to", "v1alpha4", "-f", filepath.Join(seedFixtures, "000-02-metal3cluster.yaml"))
	g.Expect(code).To(Equal(2))
	g.Expect(stderr).To(ContainSubstring(`--to "v1alpha4": choose v1beta2 or v1beta1`))
}
