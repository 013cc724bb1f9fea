// Package testpki issues short-lived ECDSA P-256 certificates for tests and
// examples that need a real TLS handshake on loopback: a certificate
// authority, server certificates for 127.0.0.1, ::1 and localhost, and
// client certificates for mutual TLS. Nothing here is meant for production
// trust: keys live in memory (or in files the caller deletes) and expire
// within the validity the caller asks for.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// DefaultValidity is the lifetime of certificates issued with a zero
// validity: long enough for a test run, short enough to be worthless later.
const DefaultValidity = time.Hour

// CA is a self-signed certificate authority.
type CA struct {
	// Cert is the CA certificate.
	Cert *x509.Certificate
	// PEM is Cert PEM-encoded.
	PEM []byte

	key      *ecdsa.PrivateKey
	validity time.Duration
}

// NewCA returns a new certificate authority named name whose certificates
// (its own included) are valid for validity from one minute ago; zero means
// DefaultValidity.
func NewCA(name string, validity time.Duration) (*CA, error) {
	if validity <= 0 {
		validity = DefaultValidity
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testpki: CA key: %w", err)
	}
	tmpl, err := template(name, validity)
	if err != nil {
		return nil, err
	}
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.MaxPathLenZero = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("testpki: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("testpki: CA certificate: %w", err)
	}
	return &CA{Cert: cert, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: key, validity: validity}, nil
}

// Pool returns a pool holding only the CA certificate.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Leaf is an issued certificate with its key.
type Leaf struct {
	// TLS is the certificate and key for tls.Config.Certificates.
	TLS tls.Certificate
	// CertPEM and KeyPEM are the certificate and its PKCS #8 key,
	// PEM-encoded.
	CertPEM, KeyPEM []byte
}

// Server issues a server certificate (extended key usage serverAuth) for
// 127.0.0.1, ::1 and localhost.
func (ca *CA) Server(name string) (*Leaf, error) {
	return ca.issue(name, x509.ExtKeyUsageServerAuth, true)
}

// Client issues a client certificate (extended key usage clientAuth) whose
// subject common name is name.
func (ca *CA) Client(name string) (*Leaf, error) {
	return ca.issue(name, x509.ExtKeyUsageClientAuth, false)
}

func (ca *CA) issue(name string, usage x509.ExtKeyUsage, loopback bool) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("testpki: key: %w", err)
	}
	tmpl, err := template(name, ca.validity)
	if err != nil {
		return nil, err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
	if loopback {
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("testpki: certificate: %w", err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("testpki: key: %w", err)
	}
	l := &Leaf{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}),
	}
	if l.TLS, err = tls.X509KeyPair(l.CertPEM, l.KeyPEM); err != nil {
		return nil, fmt.Errorf("testpki: key pair: %w", err)
	}
	return l, nil
}

// WriteFiles writes the leaf's certificate and key to dir/name.crt and
// dir/name.key (mode 0600) and returns their paths.
func (l *Leaf) WriteFiles(dir, name string) (certFile, keyFile string, err error) {
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	return certFile, keyFile, errors.Join(os.WriteFile(certFile, l.CertPEM, 0o600), os.WriteFile(keyFile, l.KeyPEM, 0o600))
}

// WriteFile writes the CA certificate to dir/name.crt and returns its path.
func (ca *CA) WriteFile(dir, name string) (string, error) {
	p := filepath.Join(dir, name+".crt")
	return p, os.WriteFile(p, ca.PEM, 0o600)
}

func template(name string, validity time.Duration) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("testpki: serial: %w", err)
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(validity),
	}, nil
}
