// Command image builds metalwire's manager image without a container runtime: one layer holding
// the static manager binary, CA certificates and a passwd entry for the non-root user, on no base
// image, so there is no shell or package manager to exploit. The same inputs give the same digest:
// every timestamp is SOURCE_DATE_EPOCH (0 by default) and every file's owner and mode is fixed.
//
//	go run ./hack/image --binary bin/manager --out out/image --tar out/metalwire-image.tar
//
// --out writes an OCI image layout (skopeo copy oci:out/image ..., crane push --index); --tar
// writes a tarball that `docker load`, `podman load` and `crane push` accept.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed facts.
const (
	// BinaryPath is where the manager binary is in the image, and the entrypoint.
	BinaryPath = "/manager"
	// CertsPath is where Go's crypto/x509 looks for CA certificates on Linux.
	CertsPath = "/etc/ssl/certs/ca-certificates.crt"
	// UID and GID of the user the manager runs as (distroless's "nonroot").
	UID = 65532
	GID = 65532
	// User is the config's user, numeric so that Kubernetes' runAsNonRoot can verify it.
	User = "65532:65532"
)

// Options are the inputs of one image.
type Options struct {
	// Binary is the static manager binary (CGO_ENABLED=0).
	Binary string
	// CACerts is a PEM bundle of CA certificates (Debian's ca-certificates by default).
	CACerts string
	// Version, Revision and Source become the OCI labels org.opencontainers.image.*.
	Version  string
	Revision string
	Source   string
	// Arch is the binary's architecture (GOARCH).
	Arch string
	// Created stamps the config and every file; fixed so that the digest is reproducible.
	Created time.Time
}

// Build assembles the image.
func Build(o Options) (v1.Image, error) {
	binary, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("--binary: %w (build it first: make image does)", err)
	}
	certs, err := os.ReadFile(o.CACerts)
	if err != nil {
		return nil, fmt.Errorf("--ca-certs: %w (install Debian's ca-certificates, or pass a PEM bundle)", err)
	}
	layerTar, err := rootFS(binary, certs, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("making the layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: o.Created}, CreatedBy: "metalwire hack/image", Comment: "manager binary, CA certificates, nonroot user"},
	})
	if err != nil {
		return nil, fmt.Errorf("adding the layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", o.Arch
	cfg.Created = v1.Time{Time: o.Created}
	cfg.Config.Entrypoint = []string{BinaryPath}
	cfg.Config.Cmd = nil
	cfg.Config.User = User
	cfg.Config.WorkingDir = "/"
	cfg.Config.Env = []string{"SSL_CERT_FILE=" + CertsPath}
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":       "metalwire manager",
		"org.opencontainers.image.description": "Cluster API infrastructure provider for Metal3 bare-metal hosts",
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.revision":    o.Revision,
		"org.opencontainers.image.source":      o.Source,
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the config: %w", err)
	}
	return mutate.CreatedAt(img, v1.Time{Time: o.Created})
}

// rootFS is the layer's tar: directories, the non-root user, the certificates and the binary,
// each with a fixed owner, mode and time.
func rootFS(binary, certs []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, uid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: uid, Gid: uid, ModTime: mtime, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n" //nolint:gosec // account entries; "x" means no password here
	group := "root:x:0:\nnonroot:x:65532:\n"
	errs := []error{
		dir("etc/", 0o755, 0),
		file("etc/passwd", 0o644, []byte(passwd)),
		file("etc/group", 0o644, []byte(group)),
		dir("etc/ssl/", 0o755, 0),
		dir("etc/ssl/certs/", 0o755, 0),
		file(CertsPath[1:], 0o644, certs),
		dir("home/", 0o755, 0),
		dir("home/nonroot/", 0o700, UID),
		dir("tmp/", 0o1777, 0),
		file(BinaryPath[1:], 0o755, binary),
		tw.Close(),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("writing the layer: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteLayout writes img as the only image of an OCI layout in dir, replacing what was there,
// annotated with its reference so that tools name it.
func WriteLayout(dir string, img v1.Image, ref string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref}))
}

// WriteTarball writes img as a `docker load` tarball tagged ref.
func WriteTarball(path string, img v1.Image, ref string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("--tag %s: %w", ref, err)
	}
	return tarball.WriteToFile(path, tag, img)
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH (reproducible-builds.org), 0 when unset.
func sourceDateEpoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run() error {
	var o Options
	var out, tarPath, tag string
	flag.StringVar(&o.Binary, "binary", "", "the static manager binary to put in the image (required)")
	flag.StringVar(&o.CACerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of CA certificates (Debian's ca-certificates)")
	flag.StringVar(&o.Version, "version", "dev", "version label")
	flag.StringVar(&o.Revision, "revision", "", "git commit label")
	flag.StringVar(&o.Source, "source", "https://github.com/metalwire/metalwire", "source repository label")
	flag.StringVar(&o.Arch, "arch", runtime.GOARCH, "the binary's architecture")
	flag.StringVar(&out, "out", "", "write an OCI image layout to this directory")
	flag.StringVar(&tarPath, "tar", "", "write a docker-load tarball to this file")
	flag.StringVar(&tag, "tag", "ghcr.io/metalwire/manager:dev", "the image's reference")
	flag.Parse()
	if o.Binary == "" || (out == "" && tarPath == "") {
		return errors.New("want --binary and at least one of --out, --tar")
	}
	created, err := sourceDateEpoch()
	if err != nil {
		return err
	}
	o.Created = created
	img, err := Build(o)
	if err != nil {
		return err
	}
	if out != "" {
		if err := WriteLayout(out, img, tag); err != nil {
			return err
		}
	}
	if tarPath != "" {
		if err := WriteTarball(tarPath, img, tag); err != nil {
			return err
		}
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	size, err := imageSize(img)
	if err != nil {
		return err
	}
	fmt.Printf("%s %s (%.1f MB compressed)\n", tag, digest, float64(size)/1e6)
	return nil
}

// imageSize is the compressed size of the image's layers and config.
func imageSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	size := m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	return size, nil
}
