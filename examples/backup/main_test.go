package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRun runs the program as `go run` would: it starts its own Azurite
// (or uses the account in the environment), runs the step and stops it.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"its export is byte-identical: true.",
		"Run again: 0 upgraded, 3000 already current.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.HasPrefix(out.String(), "Started Azurite") && !strings.HasPrefix(out.String(), "Using the account") {
		t.Errorf("output does not say where it ran:\n%s", out.String())
	}
}
