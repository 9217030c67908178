package manager

import (
	"github.com/spf13/pflag"

	"github.com/metalwire/metalwire/internal/controller/metal3remediation"
)

// addRemediationFlags adds --remediation-node-mode. Upstream CAPM3 has no flag: it always decides
// by the management cluster's Kubernetes version, which is what auto, the default, does.
func (o *Options) addRemediationFlags(fs *pflag.FlagSet) {
	o.RemediationNodeMode = metal3remediation.NodeModeAuto
	fs.Var(nodeModeValue{&o.RemediationNodeMode}, "remediation-node-mode",
		"what a Metal3Remediation does with the Machine's Node while the host is off: taint (keep it, tainted node.kubernetes.io/out-of-service, until its pods and volumes are gone), "+
			"delete (delete it, putting its labels and annotations back once it re-registers), or auto (taint when the management cluster runs Kubernetes 1.28 or later, as upstream CAPM3)")
}

// nodeModeValue refuses an unknown mode when the flags are parsed.
type nodeModeValue struct{ mode *metal3remediation.NodeMode }

func (v nodeModeValue) String() string {
	if v.mode == nil {
		return ""
	}
	return string(*v.mode)
}

func (v nodeModeValue) Set(s string) error {
	m, err := metal3remediation.ParseNodeMode(s)
	if err != nil {
		return err
	}
	*v.mode = m
	return nil
}

func (v nodeModeValue) Type() string { return "auto|taint|delete" }
