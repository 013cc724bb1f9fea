package testpki_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenthooks/agenthooks-go/internal/testpki"
)

// TestHandshake: a server and a client certificate of one CA complete a
// mutual TLS handshake on loopback; the certificates are ECDSA P-256,
// short-lived and restricted to their usage.
func TestHandshake(t *testing.T) {
	ca, err := testpki.NewCA("test CA", 5*time.Minute)
	require.NoError(t, err)
	srv, err := ca.Server("srv")
	require.NoError(t, err)
	cli, err := ca.Client("cli")
	require.NoError(t, err)
	for _, l := range []*testpki.Leaf{srv, cli} {
		c, err := x509.ParseCertificate(l.TLS.Certificate[0])
		require.NoError(t, err)
		pub, ok := c.PublicKey.(*ecdsa.PublicKey)
		require.True(t, ok)
		require.Equal(t, elliptic.P256(), pub.Curve)
		require.LessOrEqual(t, c.NotAfter.Sub(c.NotBefore), 6*time.Minute)
		require.Len(t, c.ExtKeyUsage, 1)
	}

	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{srv.TLS}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()})
	require.NoError(t, err)
	defer ln.Close()
	peer := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			peer <- ""
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		if tc.Handshake() != nil {
			peer <- ""
			return
		}
		peer <- tc.ConnectionState().VerifiedChains[0][0].Subject.CommonName
	}()
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{cli.TLS}})
	require.NoError(t, err)
	require.NoError(t, conn.Handshake())
	require.Equal(t, "cli", <-peer)
	require.NoError(t, conn.Close())

	dir := t.TempDir()
	certFile, keyFile, err := cli.WriteFiles(dir, "cli")
	require.NoError(t, err)
	_, err = tls.LoadX509KeyPair(certFile, keyFile)
	require.NoError(t, err)
	caFile, err := ca.WriteFile(dir, "ca")
	require.NoError(t, err)
	info, err := os.Stat(keyFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	require.Equal(t, filepath.Join(dir, "ca.crt"), caFile)
}
