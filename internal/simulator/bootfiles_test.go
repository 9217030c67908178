package simulator_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/metalwire/metalwire/internal/simulator"
)

// Network data written by hand as YAML may carry an id that YAML read as a boolean; the files
// are still read, and a missing file says so.
func TestReadBootNetworkTakesAnyScalar(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	doc := `{"links":[{"id":"eno1","type":"phy"}],"networks":[{"id":false,"ip_address":"192.0.2.7"},{"id":"v6","ip_address":"2001:db8::7"},{"id":"dhcp","type":"ipv4_dhcp"}]}`
	g.Expect(os.WriteFile(filepath.Join(dir, simulator.NetworkDataFile), []byte(doc), 0o600)).To(Succeed())
	n, err := simulator.ReadBootNetwork(dir, simulator.NetworkDataFile)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n.Addresses()).To(Equal(map[string]string{"false": "192.0.2.7", "v6": "2001:db8::7"}))
	g.Expect(string(n.Links[0].Type)).To(Equal("phy"))

	_, err = simulator.ReadBootNetwork(dir, simulator.PreprovNetworkFile)
	g.Expect(err).To(MatchError(fs.ErrNotExist))
}
