package release

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// File names clusterctl looks for in a provider repository.
const (
	ComponentsFile = "infrastructure-components.yaml"
	MetadataFile   = "metadata.yaml"
	TemplateFile   = "cluster-template.yaml"
)

// ProviderName is metalwire's name to clusterctl (clusterctl init --infrastructure metalwire).
const ProviderName = "metalwire"

// DefaultImage is the image config/manager names; Options.Image replaces it with the release's. The
// image is literal, as in every Cluster API provider: clusterctl cannot parse a variable there
// (generate provider --describe fails on it), and users change it with clusterctl's image
// overrides (`images:` in clusterctl.yaml).
const DefaultImage = "ghcr.io/metalwire/manager:latest"

// Series is one minor release line and the Cluster API contract it speaks.
type Series struct {
	Major, Minor int32
	Contract     string
}

// ReleaseSeries lists every metalwire release line; add the new one before releasing it (clusterctl
// refuses a version no series covers).
var ReleaseSeries = []Series{
	{Major: 0, Minor: 1, Contract: "v1beta2"},
}

// Options say what to write.
type Options struct {
	// Root is the repository's root (config/ and examples/ are below it).
	Root string
	// Image is the manager image the components run (DefaultImage if empty).
	Image string
}

// Artifacts are the files of one release.
type Artifacts struct {
	Components, Metadata, Template []byte
}

// Make renders every artifact.
func Make(o Options) (*Artifacts, error) {
	components, err := Components(o)
	if err != nil {
		return nil, err
	}
	template, err := ClusterTemplate(filepath.Join(o.Root, "examples", "cluster"))
	if err != nil {
		return nil, err
	}
	return &Artifacts{Components: components, Metadata: Metadata(), Template: template}, nil
}

// Write writes the artifacts into dir.
func (a *Artifacts) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	for name, data := range map[string][]byte{ComponentsFile: a.Components, MetadataFile: a.Metadata, TemplateFile: a.Template} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// Components renders config/default, as `kustomize build config/default` would.
func Components(o Options) ([]byte, error) {
	dir := filepath.Join(o.Root, "config", "default")
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		return nil, err
	}
	image := o.Image
	if image == "" {
		image = DefaultImage
	}
	if !bytes.Contains(out, []byte("image: "+DefaultImage+"\n")) {
		return nil, fmt.Errorf("%s: the manager's image is not %s", dir, DefaultImage)
	}
	out = bytes.ReplaceAll(out, []byte("image: "+DefaultImage+"\n"), []byte("image: "+image+"\n"))
	return out, nil
}

// Metadata is metadata.yaml: every release series and its contract.
func Metadata() []byte {
	var b strings.Builder
	b.WriteString("# metalwire's release series and the Cluster API contract each speaks (clusterctl reads this).\n")
	b.WriteString("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n")
	for _, s := range ReleaseSeries {
		fmt.Fprintf(&b, "  - major: %d\n    minor: %d\n    contract: %s\n", s.Major, s.Minor, s.Contract)
	}
	return []byte(b.String())
}

// templateVars turn the example's values into clusterctl variables; a default after := is what
// the example had, so only the values without one must be set.
var templateVars = []struct{ from, to string }{
	{"host: 192.168.111.249", "host: ${CONTROL_PLANE_ENDPOINT_HOST}"},
	{"port: 6443", "port: ${CONTROL_PLANE_ENDPOINT_PORT:=6443}"},
	{"version: v1.34.0", "version: ${KUBERNETES_VERSION}"},
	{"replicas: 3", "replicas: ${WORKER_MACHINE_COUNT:=3}"},
	{"checksum: http://images.example.com/ubuntu-24.04.qcow2.sha256sum", "checksum: ${IMAGE_CHECKSUM}"},
	{"url: http://images.example.com/ubuntu-24.04.qcow2", "url: ${IMAGE_URL}"},
	{"checksumType: sha256", "checksumType: ${IMAGE_CHECKSUM_TYPE:=sha256}"},
	{"diskFormat: qcow2", "diskFormat: ${IMAGE_FORMAT:=qcow2}"},
	{"start: 192.168.111.20", "start: ${BAREMETAL_V4_POOL_START:=192.168.111.20}"},
	{"end: 192.168.111.59", "end: ${BAREMETAL_V4_POOL_END:=192.168.111.59}"},
	{"gateway: 192.168.111.1", "gateway: ${BAREMETAL_V4_GATEWAY:=192.168.111.1}"},
	{"- 192.168.111.1", "- ${BAREMETAL_V4_DNS:=192.168.111.1}"},
	{"prefix: 24", "prefix: ${BAREMETAL_V4_PREFIX:=24}"},
	// The example's cluster uses dev mode's simulated switch; a generated cluster uses switches
	// only when CLUSTER_NETWORK names a ClusterNetwork of its own (docs/fabric.md).
	{"clusterNetwork: demo", `clusterNetwork: ${CLUSTER_NETWORK:=""}`},
}

// clusterName finds the example cluster's name where it is a whole value or a name's first part
// (demo, demo-workers), not inside a label key such as demo.metalwire.io/role.
var clusterName = regexp.MustCompile(`(?m)(: |- )demo(-[a-z0-9.-]*)?$`)

// ClusterTemplate makes cluster-template.yaml from the example manifests in dir: every object in
// ${NAMESPACE}, named after ${CLUSTER_NAME}, with the variables clusterctl generate cluster sets.
func ClusterTemplate(dir string) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var docs []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for i, doc := range strings.Split(string(data), "\n---") {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
				return nil, fmt.Errorf("%s document %d: %w", f, i+1, err)
			}
			if len(obj.Object) == 0 {
				continue
			}
			obj.SetNamespace("${NAMESPACE}")
			out, err := yaml.Marshal(obj.Object)
			if err != nil {
				return nil, err
			}
			docs = append(docs, string(out))
		}
	}
	text := strings.Join(docs, "---\n")
	for _, v := range templateVars {
		if !strings.Contains(text, v.from) {
			return nil, fmt.Errorf("%s no longer has %q: update templateVars in internal/release", dir, v.from)
		}
		text = strings.ReplaceAll(text, v.from, v.to)
	}
	text = clusterName.ReplaceAllString(text, "$1$${CLUSTER_NAME}$2")
	if strings.Contains(text, ": demo\n") {
		return nil, fmt.Errorf("%s: a name was left as the example's", dir)
	}
	header := "# Made by `make release-manifests` from examples/cluster: clusterctl generate cluster NAME --infrastructure metalwire\n" +
		"# The control plane is one plain Machine and every host boots ${CLUSTER_NAME}-bootstrap, as in\n" +
		"# examples/README.md; swap in your bootstrap and control plane providers' objects for production.\n"
	return []byte(header + text), nil
}
