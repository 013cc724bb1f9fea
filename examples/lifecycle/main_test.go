package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == "-backend" {
		os.Exit(backend())
	}
	os.Exit(m.Run())
}

func TestExample(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err, out.String())
	}
	if !strings.Contains(out.String(), "reaped") {
		t.Fatalf("unexpected output %q", out.String())
	}
}
