package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == "-backend" {
		os.Exit(backend())
	}
	os.Exit(m.Run())
}

func TestExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "permission=deny") || !strings.Contains(out.String(), "reaped") {
		t.Fatalf("unexpected output %q", out.String())
	}
}
