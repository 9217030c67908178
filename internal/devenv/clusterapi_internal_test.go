package devenv

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

// Dev mode looks for metalwire-capi in $METALWIRE_CAPI, then beside itself, then on PATH, and
// says how to get it when none has it.
func TestFindClusterAPIBinary(t *testing.T) {
	g := NewWithT(t)
	p := &printer{out: io.Discard}
	ctx := context.Background()

	t.Setenv(ClusterAPIBinaryEnv, filepath.Join(t.TempDir(), "nowhere"))
	_, err := findClusterAPIBinary(ctx, false, p)
	g.Expect(err).To(MatchError(ContainSubstring("$METALWIRE_CAPI: stat ")))
	g.Expect(err).To(MatchError(ContainSubstring("unset it or build the program there")))

	named := filepath.Join(t.TempDir(), "my-capi")
	g.Expect(os.WriteFile(named, []byte("#!/bin/sh\n"), 0o700)).To(Succeed())
	t.Setenv(ClusterAPIBinaryEnv, named)
	g.Expect(findClusterAPIBinary(ctx, false, p)).To(Equal(named))

	t.Setenv(ClusterAPIBinaryEnv, "")
	onPath := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(onPath, ClusterAPIBinary), []byte("#!/bin/sh\n"), 0o700)).To(Succeed())
	t.Setenv("PATH", onPath)
	g.Expect(findClusterAPIBinary(ctx, false, p)).To(Equal(filepath.Join(onPath, ClusterAPIBinary)))

	t.Setenv("PATH", t.TempDir())
	_, err = findClusterAPIBinary(ctx, false, p)
	g.Expect(err).To(MatchError(ContainSubstring("metalwire-capi, which runs Cluster API's controllers in dev mode, is neither beside this program")))
	g.Expect(err).To(MatchError(ContainSubstring("build it with make build (bin/metalwire-capi, beside bin/metalwire) or go install ./cmd/...")))
}
