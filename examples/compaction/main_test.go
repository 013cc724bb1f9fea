package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func TestExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, &out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"round 1: applied=true generated=false failedClosed=false supplier=com.example.summarizer",
		"  before com.example.summarizer: accepted",
		"  after host.redactor: accepted",
		"  message from com.example.summarizer: summary provided by the summarizer",
		"  installed summary: 2 messages: the user deployed with key [redacted] and asked for a rollback plan.",
		"round 2: applied=false generated=false failedClosed=true supplier=",
		"  before com.example.summarizer: failed (callback_error)",
		"  nothing installed",
		"generator calls: 0",
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
	if strings.Contains(out.String(), "sk-live") {
		t.Fatal("the secret reached the installed summary")
	}
}
