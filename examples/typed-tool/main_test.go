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
	if err := run(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "permission=allow path=/workspace/notes.txt") {
		t.Fatalf("unexpected output %q", out.String())
	}
}
