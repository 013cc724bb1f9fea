package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
)

// Transport labels of the adapter contract.
const (
	transportHTTP  = "http"
	transportStdio = "stdio"
)

// Authentication labels of the adapter contract.
const (
	authNone     = "none"
	authBearer   = "bearer"
	authOAuth    = "oauth"
	authMTLS     = "mtls"
	authWorkload = "workload"
)

// authConfig is the auth object of both configs (CONTRACT.md): the member
// sets differ per mode and side, and members a mode does not use are
// ignored. Token, ClientSecret, SigningKey, Assertion and the key file's
// contents are secret: they are compared, signed with or sent, never
// printed; String, GoString and LogValue render the mode only.
type authConfig struct {
	Mode string `json:"mode"`
	// bearer, both sides.
	Token string `json:"token,omitempty"`
	// oauth client: the client-credentials grant.
	TokenEndpoint string `json:"tokenEndpoint,omitempty"`
	ClientID      string `json:"clientId,omitempty"`
	ClientSecret  string `json:"clientSecret,omitempty"`
	// oauth and workload: the signed-token checks (server; oauth client
	// too, when it is given the signing key).
	SigningKey string      `json:"signingKey,omitempty"`
	Issuer     string      `json:"issuer,omitempty"`
	Audience   string      `json:"audience,omitempty"`
	Purpose    string      `json:"purpose,omitempty"`
	Clock      json.Number `json:"clock,omitempty"`
	// workload client: the pre-signed assertion, sent as the bearer token.
	Assertion string `json:"assertion,omitempty"`
	// mtls, both sides.
	CAFile   string `json:"caFile,omitempty"`
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
}

// String keeps every secret out of any accidental formatting.
func (a authConfig) String() string { return "auth(" + a.Mode + ")" }

// GoString keeps every secret out of %#v.
func (a authConfig) GoString() string { return a.String() }

// LogValue keeps every secret out of slog.
func (a authConfig) LogValue() slog.Value { return slog.StringValue(a.String()) }

// serverConfig is the scripted server's configuration (CONTRACT.md).
type serverConfig struct {
	Transport     string     `json:"transport"`
	ReadinessFile string     `json:"readinessFile"`
	ScenarioFile  string     `json:"scenarioFile"`
	Auth          authConfig `json:"auth"`
}

// clientConfig is the client's configuration (CONTRACT.md).
type clientConfig struct {
	Transport     string     `json:"transport"`
	Endpoint      string     `json:"endpoint,omitempty"`
	ServerCommand []string   `json:"serverCommand,omitempty"`
	ServerCwd     string     `json:"serverCwd,omitempty"`
	ServerConfig  string     `json:"serverConfig,omitempty"`
	ScenarioFile  string     `json:"scenarioFile"`
	ReportFile    string     `json:"reportFile"`
	Auth          authConfig `json:"auth"`
}

// errUsage marks configuration and command-line errors (exit status 2).
var errUsage = errors.New("usage")

// maxConfigFile bounds a configuration file.
const maxConfigFile = 1 << 20

// loadConfig decodes a JSON configuration file into v. Unknown members are
// ignored, as the contract's receivers must.
func loadConfig(path string, v any) error {
	data, err := readBounded(path, maxConfigFile)
	if err != nil {
		return fmt.Errorf("%w: read config: %w", errUsage, err)
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(v); err != nil {
		// The decoder's message can quote a value; keep only the fact.
		return fmt.Errorf("%w: config is not the expected JSON object", errUsage)
	}
	return nil
}

func (c *serverConfig) check() error {
	switch c.Transport {
	case transportHTTP, transportStdio:
	default:
		return fmt.Errorf("%w: server transport must be http or stdio", errUsage)
	}
	if c.ScenarioFile == "" {
		return fmt.Errorf("%w: server config needs scenarioFile", errUsage)
	}
	if c.Transport == transportHTTP && c.ReadinessFile == "" {
		return fmt.Errorf("%w: http server config needs readinessFile", errUsage)
	}
	if c.Auth.Mode == "" {
		c.Auth.Mode = authNone
	}
	return nil
}

func (c *clientConfig) check() error {
	switch c.Transport {
	case transportHTTP, transportStdio:
	default:
		return fmt.Errorf("%w: client transport must be http or stdio", errUsage)
	}
	if c.ScenarioFile == "" || c.ReportFile == "" {
		return fmt.Errorf("%w: client config needs scenarioFile and reportFile", errUsage)
	}
	if c.Auth.Mode == "" {
		c.Auth.Mode = authNone
	}
	return nil
}

// writeFileAtomic writes data to a temporary file beside path and renames it
// into place, so a reader never sees a partial document.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write temporary file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}
