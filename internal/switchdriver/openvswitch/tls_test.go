package openvswitch_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/metalwire/metalwire/internal/switchdriver/openvswitch"
	"github.com/metalwire/metalwire/internal/switchtest/ovstest"
	"github.com/metalwire/metalwire/pkg/fabric"
)

// An ssl: remote: the switch trusts client certificates of its CA; the driver presents the
// kubernetes.io/tls Secret's certificate and checks the switch's certificate against ca.crt.
func TestSSLRemote(t *testing.T) {
	ca, caKey, caPEM := newCA(t, "switch CA")
	serverCert, serverKey := newLeaf(t, ca, caKey, "leaf1")
	clientCert, clientKey := newLeaf(t, ca, caKey, "metalwire")
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	port := ovstest.FreePort(t)
	s := ovstest.StartSwitch(t, ovstest.Options{
		ExtraRemotes: []string{fmt.Sprintf("pssl:%d:127.0.0.1", port)},
		ExtraArgs: []string{"--private-key=" + write("server.key", serverKey), "--certificate=" + write("server.crt", serverCert),
			"--ca-cert=" + write("ca.crt", caPEM)},
	})
	br := s.AddBridge(t, "br0")
	s.AddPorts(t, br, 1, "p1")
	creds := fabric.Credentials{CertPEM: clientCert, KeyPEM: clientKey, CAPEM: caPEM}
	ctx := context.Background()

	// A plain address with a client certificate in the credentials means ssl:.
	sess, err := openvswitch.Driver{}.Connect(ctx, fabric.Endpoint{Switch: "leaf1", Address: "127.0.0.1", Port: port, Bridge: br, Credentials: creds})
	if err != nil {
		t.Fatalf("connect over ssl: %v", err)
	}
	defer func() { _ = sess.Close() }()
	if err := sess.Apply(ctx, fabric.Batch{{Op: fabric.OpAccessPort, Port: fabric.Port{Name: "p1", Mode: fabric.ModeAccess, VLAN: 1001}}}); err != nil {
		t.Fatalf("apply over ssl: %v", err)
	}
	if got := s.Ports(t)["p1"]; got.Tag != 1001 {
		t.Fatalf("p1 after apply over ssl: %+v", got)
	}

	// A switch whose certificate another CA signed is refused.
	_, _, otherCA := newCA(t, "another CA")
	bad := creds
	bad.CAPEM = otherCA
	_, err = openvswitch.Driver{DialTimeout: 3 * time.Second}.Connect(ctx, fabric.Endpoint{Switch: "leaf1", Address: fmt.Sprintf("ssl:127.0.0.1:%d", port), Credentials: bad})
	if err == nil || !strings.Contains(err.Error(), "switch leaf1") {
		t.Fatalf("a switch certificate of another CA: %v, want refused", err)
	}
	t.Logf("as a user sees it: %v", err)
	// ssl: without a certificate says which Secret keys are missing.
	_, err = openvswitch.Driver{}.Connect(ctx, fabric.Endpoint{Switch: "leaf1", Address: fmt.Sprintf("ssl:127.0.0.1:%d", port)})
	if err == nil || !strings.Contains(err.Error(), "tls.crt, tls.key and ca.crt") {
		t.Fatalf("ssl without credentials: %v", err)
	}
}

func newCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func newLeaf(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, name string) ([]byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
