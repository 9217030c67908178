package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// RepoRoot returns the root of the metalwire checkout this package was built from.
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("controlplane: cannot tell where the source tree is")
	}
	if !filepath.IsAbs(file) {
		// Built with -trimpath (make build): the source path is not recorded, so look for the
		// checkout from the working directory up.
		return checkoutAbove(".")
	}
	// file is <root>/internal/controlplane/paths.go
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	if _, err := os.Stat(filepath.Join(root, "hack", "tools", "go.mod")); err != nil {
		return "", fmt.Errorf("controlplane: %s is not a metalwire checkout (no hack/tools/go.mod): %w", root, err)
	}
	return root, nil
}

// checkoutAbove finds the metalwire checkout holding dir.
func checkoutAbove(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "hack", "tools", "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("controlplane: %s is not inside a metalwire checkout (no hack/tools/go.mod above it); run from the repository", abs)
		}
	}
}

// BinDir returns the directory that holds kube-apiserver and etcd: KUBEBUILDER_ASSETS if
// set, otherwise bin/control-plane/kube-<version>-etcd-<version> as `make tools` builds it.
func BinDir() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	gomod, err := os.ReadFile(filepath.Join(root, "hack", "tools", "go.mod"))
	if err != nil {
		return "", fmt.Errorf("controlplane: reading tool versions: %w", err)
	}
	kube, etcd := requiredVersion(gomod, "k8s.io/kubernetes"), requiredVersion(gomod, "go.etcd.io/etcd/server/v3")
	if kube == "" || etcd == "" {
		return "", errors.New("controlplane: hack/tools/go.mod must require k8s.io/kubernetes and go.etcd.io/etcd/server/v3")
	}
	return filepath.Join(root, "bin", "control-plane", "kube-"+kube+"-etcd-"+etcd), nil
}

// requiredVersion finds `module version` in a go.mod's require lines.
func requiredVersion(gomod []byte, module string) string {
	for _, line := range bytes.Split(gomod, []byte("\n")) {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(string(line)), "require "))
		if len(fields) >= 2 && fields[0] == module {
			return fields[1]
		}
	}
	return ""
}

// checkBinaries says what to do when the control plane has not been built.
func checkBinaries(dir string) error {
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("%s not found in %s: run make tools", name, dir)
		}
	}
	return nil
}

// ModuleDir returns where the Go module cache holds a module the main module requires.
func ModuleDir(module string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return "", fmt.Errorf("controlplane: go list -m %s: %s", module, bytes.TrimSpace(exitErr.Stderr))
		}
		return "", fmt.Errorf("controlplane: go list -m %s: %w", module, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("controlplane: module %s is not downloaded: run go mod download", module)
	}
	return dir, nil
}

// CRDDirs returns every directory whose CRDs a test environment installs.
func CRDDirs() ([]string, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	capi, err := ModuleDir("sigs.k8s.io/cluster-api")
	if err != nil {
		return nil, err
	}
	dirs := []string{
		filepath.Join(root, "config", "crd", "bases"), // metalwire's own kinds
		filepath.Join(root, "config", "crd", "dev"),   // BareMetalHost, dev and tests only
		filepath.Join(capi, "core", "config", "crd", "bases"),
		// KubeadmConfig(Template) and KubeadmControlPlane: manifests users migrate hold them.
		filepath.Join(capi, "bootstrap", "kubeadm", "config", "crd", "bases"),
		filepath.Join(capi, "controlplane", "kubeadm", "config", "crd", "bases"),
	}
	return dirs, nil
}

// CheckControlPlane returns the directory holding kube-apiserver and etcd, with an error saying
// "run make tools" when they have not been built. Dev mode calls it to offer to build them.
func CheckControlPlane() (string, error) {
	dir, err := BinDir()
	if err != nil {
		return "", err
	}
	return dir, checkBinaries(dir)
}
