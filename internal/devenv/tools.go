package devenv

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/metalwire/metalwire/internal/controlplane"
)

// ensureControlPlane checks that kube-apiserver and etcd have been built into bin/ and, when
// allowed and make is there, builds them with `make tools`.
func ensureControlPlane(ctx context.Context, makeTools bool, p *printer) error {
	_, missing := controlplane.CheckControlPlane()
	if missing == nil {
		return nil
	}
	if !makeTools {
		return missing
	}
	makePath, err := exec.LookPath("make")
	if err != nil {
		return missing
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		return errors.Join(missing, err)
	}
	p.printf("%v: running make tools (the first build takes several minutes)", missing)
	cmd := exec.CommandContext(ctx, makePath, "tools")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("make tools failed (%w); run it yourself to see why", err)
	}
	_, err = controlplane.CheckControlPlane()
	return err
}
