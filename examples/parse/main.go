// Command parse reads an AHP hooks/intercept request, validates it against
// the canonical schema, prints what it carries, and re-encodes it
// losslessly.
//
//	go run ./examples/parse                      # the vendored fixture
//	go run ./examples/parse -file request.json   # your own request
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/agenthooks/agenthooks-go/gen"
)

func main() {
	file := flag.String("file", "testdata/fixtures/draft/http/intercept-request.valid.json", "intercept request to parse")
	flag.Parse()
	if err := run(*file); err != nil {
		fmt.Fprintln(os.Stderr, "parse:", err)
		os.Exit(1)
	}
}

func run(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	req, err := gen.ParseInterceptRequest(data)
	if err != nil {
		return fmt.Errorf("invalid request: %w", err)
	}
	ev := req.Params.Event
	fmt.Printf("method:        %s\n", req.Method)
	fmt.Printf("event:         %s (id %s)\n", ev.Type(), ev.ID())
	if tb := ev.ToolBefore; tb != nil {
		kind := "(none)"
		if tb.Tool.Kind != nil {
			kind = *tb.Tool.Kind
		}
		fmt.Printf("tool:          %s (kind %s, origin %s)\n", tb.Tool.Name, kind, tb.Tool.Origin)
		fmt.Printf("tool input:    %d bytes of application JSON, kept verbatim\n", len(tb.Tool.Input))
	}
	fmt.Printf("granted:       %v\n", req.Params.Capabilities.Effects)
	out, err := gen.EncodeInterceptRequest(req)
	if err != nil {
		return err
	}
	fmt.Printf("re-encoded:    %d bytes (input %d bytes)\n%s\n", len(out), len(data), out)
	return nil
}
