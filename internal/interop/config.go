package interop

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
	TransportHTTP  = "http"
	TransportStdio = "stdio"
)

// Authentication labels of the adapter contract.
const (
	AuthNone     = "none"
	AuthBearer   = "bearer"
	AuthOAuth    = "oauth"
	AuthMTLS     = "mtls"
	AuthWorkload = "workload"
)

// AuthConfig is the auth object of both configs (CONTRACT.md): the member
// sets differ per mode and side, and members a mode does not use are
// ignored. Token, ClientSecret, SigningKey, Assertion and the key file's
// contents are secret: they are compared, signed with or sent, never
// printed; String, GoString and LogValue render the mode only.
type AuthConfig struct {
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
func (a AuthConfig) String() string { return "auth(" + a.Mode + ")" }

// GoString keeps every secret out of %#v.
func (a AuthConfig) GoString() string { return a.String() }

// LogValue keeps every secret out of slog.
func (a AuthConfig) LogValue() slog.Value { return slog.StringValue(a.String()) }

// ServerConfig is the scripted server's configuration (CONTRACT.md).
type ServerConfig struct {
	Transport     string     `json:"transport"`
	ReadinessFile string     `json:"readinessFile"`
	ScenarioFile  string     `json:"scenarioFile"`
	Auth          AuthConfig `json:"auth"`
}

// ClientConfig is the client's configuration (CONTRACT.md).
type ClientConfig struct {
	Transport     string     `json:"transport"`
	Endpoint      string     `json:"endpoint,omitempty"`
	ServerCommand []string   `json:"serverCommand,omitempty"`
	ServerCwd     string     `json:"serverCwd,omitempty"`
	ServerConfig  string     `json:"serverConfig,omitempty"`
	ScenarioFile  string     `json:"scenarioFile"`
	ReportFile    string     `json:"reportFile"`
	Auth          AuthConfig `json:"auth"`
}

// ErrUsage marks configuration and command-line errors (exit status 2).
var ErrUsage = errors.New("usage")

// MaxConfigFile bounds a configuration file.
const MaxConfigFile = 1 << 20

// LoadConfig decodes a JSON configuration file into v. Unknown members are
// ignored, as the contract's receivers must.
func LoadConfig(path string, v any) error {
	data, err := ReadBounded(path, MaxConfigFile)
	if err != nil {
		return fmt.Errorf("%w: read config: %w", ErrUsage, err)
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(v); err != nil {
		// The decoder's message can quote a value; keep only the fact.
		return fmt.Errorf("%w: config is not the expected JSON object", ErrUsage)
	}
	return nil
}

// Check validates the server configuration and defaults the auth mode to
// none. Its errors wrap ErrUsage.
func (c *ServerConfig) Check() error {
	switch c.Transport {
	case TransportHTTP, TransportStdio:
	default:
		return fmt.Errorf("%w: server transport must be http or stdio", ErrUsage)
	}
	if c.ScenarioFile == "" {
		return fmt.Errorf("%w: server config needs scenarioFile", ErrUsage)
	}
	if c.Transport == TransportHTTP && c.ReadinessFile == "" {
		return fmt.Errorf("%w: http server config needs readinessFile", ErrUsage)
	}
	if c.Auth.Mode == "" {
		c.Auth.Mode = AuthNone
	}
	return nil
}

// Check validates the client configuration and defaults the auth mode to
// none. Its errors wrap ErrUsage.
func (c *ClientConfig) Check() error {
	switch c.Transport {
	case TransportHTTP, TransportStdio:
	default:
		return fmt.Errorf("%w: client transport must be http or stdio", ErrUsage)
	}
	if c.ScenarioFile == "" || c.ReportFile == "" {
		return fmt.Errorf("%w: client config needs scenarioFile and reportFile", ErrUsage)
	}
	if c.Auth.Mode == "" {
		c.Auth.Mode = AuthNone
	}
	return nil
}

// WriteFileAtomic writes data to a temporary file beside path and renames it
// into place, so a reader never sees a partial document.
func WriteFileAtomic(path string, data []byte) error {
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
