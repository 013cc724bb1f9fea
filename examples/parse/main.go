// Command parse reads an AHP hooks/intercept request, validates it against
// the canonical schema, prints what it carries, and re-encodes it
// losslessly.
//
//	go run ./examples/parse                      # the embedded sample request
//	go run ./examples/parse -file request.json   # your own request
//
// The sample (request.json, a copy of the protocol's
// http/intercept-request.valid.json fixture) is embedded in the binary, so
// the command works from any directory.
package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agenthooks/agenthooks-go/gen"
)

//go:embed request.json
var sample []byte

func main() {
	file := flag.String("file", "", "intercept request to parse (default: the embedded sample)")
	flag.Parse()
	if err := run(os.Stdout, *file); err != nil {
		fmt.Fprintln(os.Stderr, "parse:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, file string) error {
	data := sample
	if file != "" {
		var err error
		if data, err = os.ReadFile(file); err != nil {
			return err
		}
	}
	req, err := gen.ParseInterceptRequest(data)
	if err != nil {
		return fmt.Errorf("invalid request: %w", err)
	}
	ev := req.Params.Event
	fmt.Fprintf(w, "method:        %s\n", req.Method)
	fmt.Fprintf(w, "event:         %s (id %s)\n", ev.Type(), ev.ID())
	if tb := ev.ToolBefore; tb != nil {
		kind := "(none)"
		if tb.Tool.Kind != nil {
			kind = *tb.Tool.Kind
		}
		fmt.Fprintf(w, "tool:          %s (kind %s, origin %s)\n", tb.Tool.Name, kind, tb.Tool.Origin)
		fmt.Fprintf(w, "tool input:    %d bytes of application JSON, kept verbatim\n", len(tb.Tool.Input))
	}
	fmt.Fprintf(w, "granted:       %v\n", req.Params.Capabilities.Effects)
	out, err := gen.EncodeInterceptRequest(req)
	if err != nil {
		return err
	}
	// The encoding is compact: it drops the whitespace between tokens (the
	// sample is indented), writes known members in schema order and unknown
	// ones after them in their order, and writes the strings of protocol
	// members in their shortest form (application JSON such as the tool
	// input is kept as it is, only compacted). No member and no value is
	// lost, so the re-encoded size is that of the input without
	// insignificant whitespace, less what escapes the input used.
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return err
	}
	fmt.Fprintf(w, "re-encoded:    %d bytes; the input is %d bytes, %d without insignificant whitespace\n", len(out), len(data), compact.Len())
	switch {
	case len(out) == compact.Len():
		fmt.Fprintln(w, "               (the encoding is compact; every member and value is kept)")
	default:
		fmt.Fprintln(w, "               (the encoding is compact and writes protocol strings in their shortest form, an escape such as \\u005f or \\/ as the character itself; every member and value is kept)")
	}
	fmt.Fprintf(w, "%s\n", out)
	return nil
}
