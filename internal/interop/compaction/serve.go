package compaction

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agenthooks/agenthooks-go/gen"
	"github.com/agenthooks/agenthooks-go/internal/boundedread"
	"github.com/agenthooks/agenthooks-go/internal/interop"
	"github.com/agenthooks/agenthooks-go/runtime/auth"
	"github.com/agenthooks/agenthooks-go/runtime/jsonrpc"
	"github.com/agenthooks/agenthooks-go/runtime/transport"
)

// TokenEnv names the bearer token of cmd/compaction's HTTP receiver.
const TokenEnv = "AHP_COMPACTION_TOKEN"

// maxMessage bounds one request body, stdio frame or stdin document.
const maxMessage = interop.MaxBody

// rpcHandler answers one JSON-RPC message; nil for a notification.
type rpcHandler func(ctx context.Context, r *http.Request, msg []byte) []byte

// bearerHTTP serves h at POST path behind a static bearer check: a
// request without exactly one valid "Bearer TOKEN" field that equals
// token (constant time) gets 401 and never reaches h.
func bearerHTTP(log *slog.Logger, path string, check func(token string) bool, h rpcHandler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
		tok, ok := interop.BearerToken(r.Header.Values("Authorization"))
		if !ok || !check(tok) {
			log.Warn("request refused", "reason", "missing or invalid bearer credential")
			w.Header().Set("WWW-Authenticate", interop.BearerRealm)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, err := boundedread.ReadAtMost(r.Body, boundedread.PlusOne(maxMessage), 4096)
		if err != nil || int64(len(body)) > maxMessage {
			http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		reply := h(r.Context(), r, body)
		if reply == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		interop.WriteJSON(w, http.StatusOK, reply)
	})
	return mux
}

// staticToken returns a constant-time check against token.
func staticToken(token string) func(string) bool {
	return func(t string) bool { return subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 }
}

// serveHTTP starts h on loopback, prints {"endpoint": URL+path} as one
// line on stdout, and serves until ctx ends.
func serveHTTP(ctx context.Context, h http.Handler, path string, stdout io.Writer, log *slog.Logger) error {
	svc, err := interop.StartHTTP(ctx, h, nil, log)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(map[string]string{"endpoint": svc.URL + path})
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		return errors.Join(err, svc.Stop())
	}
	<-ctx.Done()
	return svc.Stop()
}

// serveStdio answers NDJSON JSON-RPC on stdin/stdout until stdin ends or
// ctx ends. Messages are answered in order.
func serveStdio(ctx context.Context, stdin io.Reader, stdout io.Writer, h rpcHandler) error {
	fr := jsonrpc.NewFrameReader(stdin, maxMessage)
	fw := jsonrpc.NewFrameWriter(stdout)
	for ctx.Err() == nil {
		msg, err := fr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if interop.RecoverableFrameError(err) {
				if werr := fw.WriteFrame(jsonrpc.AppendErrorResponse(nil, jsonrpc.NullID(), jsonrpc.NewError(jsonrpc.CodeParseError))); werr != nil {
					return werr
				}
				continue
			}
			return fmt.Errorf("read stdin: %w", err)
		}
		if len(strings.TrimSpace(string(msg))) == 0 {
			continue
		}
		if reply := h(ctx, nil, msg); reply != nil {
			if err := fw.WriteFrame(reply); err != nil {
				return err
			}
		}
	}
	return nil
}

// runHandler adapts Handle.
func runHandler(ctx context.Context, _ *http.Request, msg []byte) []byte { return Handle(ctx, msg) }

// Server runs cmd/compaction's HTTP receiver: the bearer token comes from
// AHP_COMPACTION_TOKEN (unset or invalid is a usage error).
func Server(ctx context.Context, stdout io.Writer, log *slog.Logger) error {
	token := os.Getenv(TokenEnv)
	if !auth.ValidToken(token) {
		return fmt.Errorf("%w: set %s to the bearer token", interop.ErrUsage, TokenEnv)
	}
	return serveHTTP(ctx, bearerHTTP(log, "/compaction", staticToken(token), runHandler), "/compaction", stdout, log)
}

// Stdio runs cmd/compaction's NDJSON receiver on stdin/stdout.
func Stdio(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	return serveStdio(ctx, stdin, stdout, runHandler)
}

// ClientInput is what cmd/compaction's client reads on stdin.
type ClientInput struct {
	// Transport is "http" or "stdio".
	Transport string `json:"transport"`
	// Requests are JSON-RPC request objects, sent unchanged, or params
	// objects (without a "jsonrpc" member), sent as compaction/run with ids
	// 1, 2, ...
	Requests []json.RawMessage `json:"requests"`
	// Endpoint and Token address the HTTP receiver.
	Endpoint string `json:"endpoint,omitempty"`
	// Token is the receiver's bearer token.
	Token string `json:"token,omitempty"`
	// Command is the stdio receiver's argv.
	Command []string `json:"command,omitempty"`
}

// staticProvider is a credential provider with one bearer token.
type staticProvider struct{ token string }

func (p staticProvider) Credential(context.Context, auth.Request) (auth.Credential, error) {
	return auth.Bearer(p.token, "static"), nil
}

func (staticProvider) Challenge(context.Context, auth.Request, auth.Challenge) error {
	return auth.ErrNoReplay
}

// exchangeTimeout bounds one request of the clients.
const exchangeTimeout = 60 * time.Second

// Client runs cmd/compaction's client: it reads a ClientInput from stdin,
// sends each request through the SDK's HTTP transport (with the bearer
// token) or an owned stdio child, and prints the JSON array of replies.
// A failed delivery is an error; a JSON-RPC error reply is a reply.
func Client(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	raw, err := boundedread.ReadAtMost(stdin, boundedread.PlusOne(maxMessage), 4096)
	if err != nil || int64(len(raw)) > maxMessage {
		return fmt.Errorf("%w: stdin unreadable or too large", interop.ErrUsage)
	}
	var in ClientInput
	if err := decodeStrict(raw, &in); err != nil {
		return fmt.Errorf("%w: client input: %v", interop.ErrUsage, err)
	}
	var t transport.Transport
	switch in.Transport {
	case "http":
		if in.Endpoint == "" || !auth.ValidToken(in.Token) || in.Command != nil {
			return fmt.Errorf("%w: http needs endpoint and token", interop.ErrUsage)
		}
		t = transport.NewHTTP(in.Endpoint, transport.HTTPOptions{BackendID: "compaction", Credentials: staticProvider{in.Token},
			Authentication: &gen.Authentication{Bearer: &gen.AuthenticationBearer{Type: "bearer", TokenEnv: ptr(TokenEnv)}}})
	case "stdio":
		if len(in.Command) == 0 || in.Endpoint != "" || in.Token != "" {
			return fmt.Errorf("%w: stdio needs command", interop.ErrUsage)
		}
		t = transport.NewStdio(transport.StdioOptions{BackendID: "compaction", Command: in.Command[0], Args: in.Command[1:],
			Lifecycle: gen.StdioTransportLifecyclePersistent, Stderr: os.Stderr})
	default:
		return fmt.Errorf("%w: transport must be http or stdio", interop.ErrUsage)
	}
	defer t.Close()
	replies := make([]json.RawMessage, 0, len(in.Requests))
	for i, req := range in.Requests {
		msg, err := requestMessage(i, req)
		if err != nil {
			return err
		}
		rctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
		reply, err := t.Exchange(rctx, msg)
		cancel()
		if err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
		replies = append(replies, reply)
	}
	out, err := json.Marshal(replies)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// requestMessage builds the transport message of one client request.
func requestMessage(i int, req json.RawMessage) (transport.Message, error) {
	body, err := interop.CompactJSON(req)
	if err != nil {
		return transport.Message{}, fmt.Errorf("%w: request %d is not JSON", interop.ErrUsage, i)
	}
	if _, ok := jsonrpc.Member(body, "jsonrpc"); !ok {
		body = jsonrpc.AppendRequest(nil, jsonrpc.IntID(int64(i+1)), MethodRun, body)
	}
	env, err := jsonrpc.Classify(body)
	if err != nil || env.Kind != jsonrpc.KindRequest {
		return transport.Message{}, fmt.Errorf("%w: request %d is not a JSON-RPC request", interop.ErrUsage, i)
	}
	return transport.Message{BackendID: "compaction", Method: env.Method, ID: env.ID, Body: body}, nil
}

func ptr[T any](v T) *T { return &v }
