package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// auditPolicy records every write request with its metadata (who, what, the answer's code),
// not its body: enough to count how many times an object was created.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

// configureRestarts applies Options.StateDir and Options.AuditLog to the environment before it
// starts.
func configureRestarts(env *envtest.Environment, opts Options) error {
	if opts.StateDir != "" {
		etcdDir, certDir := filepath.Join(opts.StateDir, "etcd"), filepath.Join(opts.StateDir, "kube-apiserver")
		for _, d := range []string{etcdDir, certDir} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return fmt.Errorf("controlplane: StateDir: %w", err)
			}
		}
		// Directories given by the caller are not removed on Stop (envtest removes only those
		// it made up), so a second Start finds etcd's data and the serving certificate again.
		env.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcdDir}
		env.ControlPlane.GetAPIServer().CertDir = certDir
		// kube-apiserver drains its requests and watches before it exits on SIGTERM; on a
		// loaded machine that takes longer than envtest's default 20 s, after which envtest
		// kills it and reports a failure.
		env.ControlPlaneStopTimeout = 2 * time.Minute
	}
	if opts.AuditLog != "" {
		policy := opts.AuditLog + ".policy.yaml"
		if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
			return fmt.Errorf("controlplane: AuditLog: %w", err)
		}
		args := env.ControlPlane.GetAPIServer().Configure()
		args.Set("audit-policy-file", policy)
		args.Set("audit-log-path", opts.AuditLog)
		args.Set("audit-log-format", "json")
		args.Set("audit-log-mode", "blocking")
	}
	return nil
}

// StopControlPlane stops kube-apiserver, then etcd, as an operator or a crash would: clients
// see their connections refused until StartControlPlane. It needs Options.StateDir, without
// which etcd's data would be lost.
func (e *Env) StopControlPlane() error {
	if !e.restartable {
		return errors.New("controlplane: StopControlPlane needs Options.StateDir, or etcd's data is lost")
	}
	cp := &e.env.ControlPlane
	return errors.Join(cp.GetAPIServer().Stop(), cp.Etcd.Stop())
}

// StartControlPlane starts etcd and kube-apiserver again on the ports and with the data and
// certificates they had: Config, Client and KubeConfig keep working.
func (e *Env) StartControlPlane() error {
	if !e.restartable {
		return errors.New("controlplane: StartControlPlane needs Options.StateDir")
	}
	cp := &e.env.ControlPlane
	if err := cp.Etcd.Start(); err != nil {
		return fmt.Errorf("controlplane: starting etcd again: %w", err)
	}
	if err := cp.GetAPIServer().Start(); err != nil {
		return fmt.Errorf("controlplane: starting kube-apiserver again: %w", err)
	}
	return nil
}
