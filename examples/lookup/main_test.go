package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRun runs the program as `go run` would: it starts its own Azurite
// (or uses the account in the environment), runs the tour and stops it.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"Joined 200 employees with their departments: 40 employees in CC-100, 1 storage transaction",
		`within the TTL the cache still says "Research"`,
		`After Refresh: "Research & Development"; the revalidation asked only for entities changed since`,
		"of 5, in 1 query",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.HasPrefix(out.String(), "Started Azurite") && !strings.HasPrefix(out.String(), "Using the account") {
		t.Errorf("output does not say where it ran:\n%s", out.String())
	}
}
