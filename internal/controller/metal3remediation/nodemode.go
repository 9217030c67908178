package metal3remediation

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// NodeMode says what a remediation does with the Machine's Node while the host is off.
type NodeMode string

const (
	// NodeModeAuto is upstream CAPM3's choice: NodeModeTaint when the management cluster runs
	// Kubernetes 1.28 or later (where the out-of-service taint is GA), NodeModeDelete before.
	NodeModeAuto NodeMode = "auto"
	// NodeModeTaint keeps the Node and taints it node.kubernetes.io/out-of-service:NoExecute, so
	// that Kubernetes deletes its pods and detaches its volumes at once; the taint goes when the
	// host is on again.
	NodeModeTaint NodeMode = "taint"
	// NodeModeDelete deletes the Node, keeping its labels and annotations on the remediation to
	// put back on the Node the kubelet registers after the reboot.
	NodeModeDelete NodeMode = "delete"
)

// NodeModes lists the modes, for flag help and errors.
var NodeModes = []NodeMode{NodeModeAuto, NodeModeTaint, NodeModeDelete}

// ParseNodeMode reads a mode; "" means NodeModeAuto.
func ParseNodeMode(s string) (NodeMode, error) {
	if s == "" {
		return NodeModeAuto, nil
	}
	for _, m := range NodeModes {
		if NodeMode(s) == m {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown remediation node mode %q; choose auto, taint or delete", s)
}

// The first Kubernetes version where the out-of-service taint is GA (upstream's threshold).
const (
	outOfServiceTaintMajor = 1
	outOfServiceTaintMinor = 28
)

// OutOfServiceTaintSupported says whether a cluster of this version handles the out-of-service
// taint: Kubernetes 1.28 or later. Providers' minor versions such as "28+" count as 28.
func OutOfServiceTaintSupported(v *version.Info) (bool, error) {
	if v == nil {
		return false, fmt.Errorf("the API server reported no version")
	}
	major, err := strconv.Atoi(strings.TrimSuffix(v.Major, "+"))
	if err != nil {
		return false, fmt.Errorf("the API server's major version %q is not a number", v.Major)
	}
	minor, err := strconv.Atoi(strings.TrimSuffix(v.Minor, "+"))
	if err != nil {
		return false, fmt.Errorf("the API server's minor version %q is not a number", v.Minor)
	}
	return major > outOfServiceTaintMajor || (major == outOfServiceTaintMajor && minor >= outOfServiceTaintMinor), nil
}

// useOutOfServiceTaint turns a mode into the choice: auto asks the management cluster's API
// server (cfg) for its version, as upstream does. A version that cannot be read is an error
// rather than a silent fall-back to deleting Nodes.
func useOutOfServiceTaint(mode NodeMode, cfg *rest.Config) (bool, string, error) {
	switch mode {
	case NodeModeTaint:
		return true, "", nil
	case NodeModeDelete:
		return false, "", nil
	case NodeModeAuto, "":
	default:
		_, err := ParseNodeMode(string(mode))
		return false, "", err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err == nil {
		var v *version.Info
		if v, err = dc.ServerVersion(); err == nil {
			var ok bool
			if ok, err = OutOfServiceTaintSupported(v); err == nil {
				return ok, v.Major + "." + v.Minor, nil
			}
		}
	}
	return false, "", fmt.Errorf("remediation node mode auto reads the management cluster's Kubernetes version: %w; choose the mode with --remediation-node-mode=taint or delete", err)
}
