package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/internal/testneeds"
)

// shells are the names of every shell or multi-call binary an attacker could exec.
var shells = map[string]bool{"sh": true, "bash": true, "ash": true, "dash": true, "zsh": true, "busybox": true, "toybox": true}

// TestImage builds the manager as `make image` does, then checks what a cluster would run: the
// entrypoint is that very binary, the user is not root, there is no shell, the labels carry the
// version, the same inputs give the same digest, and both outputs load back.
func TestImage(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	binary := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-X github.com/metalwire/metalwire/internal/version.Version=v0.1.0-test -s -w", "-o", binary, "./cmd/manager")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "go build: %s", out)

	certs := "/etc/ssl/certs/ca-certificates.crt"
	if _, err := os.Stat(certs); err != nil {
		testneeds.Missing(t, "%s is missing (make test-deps installs Debian's ca-certificates): %v", certs, err)
	}
	opts := Options{Binary: binary, CACerts: certs, Version: "v0.1.0-test", Revision: "0123abcd", Source: "https://github.com/metalwire/metalwire", Arch: "amd64", Created: time.Unix(1700000000, 0).UTC()}
	img, err := Build(opts)
	g.Expect(err).NotTo(HaveOccurred())

	again, err := Build(opts)
	g.Expect(err).NotTo(HaveOccurred())
	d1, err := img.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	d2, err := again.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d2).To(Equal(d1), "the same inputs must give the same digest")

	cfg, err := img.ConfigFile()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Config.Entrypoint).To(Equal([]string{"/manager"}))
	g.Expect(cfg.Config.User).To(Equal("65532:65532"))
	g.Expect(cfg.OS).To(Equal("linux"))
	g.Expect(cfg.Config.Labels).To(HaveKeyWithValue("org.opencontainers.image.version", "v0.1.0-test"))
	g.Expect(cfg.Config.Labels).To(HaveKeyWithValue("org.opencontainers.image.revision", "0123abcd"))
	g.Expect(cfg.Config.Labels).To(HaveKeyWithValue("org.opencontainers.image.source", "https://github.com/metalwire/metalwire"))

	built, err := os.ReadFile(binary)
	g.Expect(err).NotTo(HaveOccurred())
	files := imageFiles(t, img)
	g.Expect(files).To(HaveKey("manager"))
	g.Expect(bytes.Equal(files["manager"], built)).To(BeTrue(), "/manager in the image differs from the binary built")
	g.Expect(files).To(HaveKey("etc/ssl/certs/ca-certificates.crt"))
	g.Expect(string(files["etc/passwd"])).To(ContainSubstring("nonroot:x:65532:65532:"))
	for name := range files {
		g.Expect(shells[path.Base(name)]).To(BeFalse(), "the image holds a shell: /%s", name)
	}

	// Both outputs read back: an OCI layout (skopeo, crane) and a docker-load tarball.
	g.Expect(WriteLayout(filepath.Join(dir, "oci"), img, "ghcr.io/metalwire/manager:v0.1.0-test")).To(Succeed())
	idx, err := layout.ImageIndexFromPath(filepath.Join(dir, "oci"))
	g.Expect(err).NotTo(HaveOccurred())
	m, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Manifests).To(HaveLen(1))
	g.Expect(m.Manifests[0].Digest).To(Equal(d1))
	g.Expect(WriteTarball(filepath.Join(dir, "image.tar"), img, "ghcr.io/metalwire/manager:v0.1.0-test")).To(Succeed())
	loaded, err := tarball.ImageFromPath(filepath.Join(dir, "image.tar"), nil)
	g.Expect(err).NotTo(HaveOccurred())
	// A docker-load tarball keeps the config and the layers but no manifest (the loader writes
	// its own, with Docker media types), so those are what must come back unchanged.
	wantConfig, err := img.ConfigName()
	g.Expect(err).NotTo(HaveOccurred())
	gotConfig, err := loaded.ConfigName()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gotConfig).To(Equal(wantConfig))
	g.Expect(layerDiffIDs(t, loaded)).To(Equal(layerDiffIDs(t, img)))
}

// layerDiffIDs lists the uncompressed digests of img's layers.
func layerDiffIDs(t *testing.T, img v1.Image) []v1.Hash {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var ids []v1.Hash
	for _, l := range layers {
		id, err := l.DiffID()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// imageFiles reads every regular file of every layer, by path without the leading slash.
func imageFiles(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Typeflag == tar.TypeSymlink || h.Typeflag == tar.TypeLink {
				files[h.Name] = []byte("-> " + h.Linkname)
				continue
			}
			if h.Typeflag != tar.TypeReg {
				continue
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = data
		}
		_ = rc.Close()
	}
	return files
}
