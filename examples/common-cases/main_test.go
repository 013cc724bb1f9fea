package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out strings.Builder
	if _, err := run(ctx, &out); err != nil {
		t.Fatal(err, out.String())
	}
	for _, want := range []string{"denied", "rejected by the host", "approval", "code=remote_rpc", "synthetic_denial=true"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
