package controlplane

import (
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

// A binary built with -trimpath finds the checkout from the working directory.
func TestCheckoutAboveFindsTheRepositoryFromASubfolder(t *testing.T) {
	g := NewWithT(t)
	root, err := RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	got, err := checkoutAbove(filepath.Join(root, "internal", "controlplane"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(root))

	_, err = checkoutAbove(t.TempDir())
	g.Expect(err).To(MatchError(ContainSubstring("is not inside a metalwire checkout")))
}
