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
		"Sales is managed by Jones, Jeff, phone 425-555-0101: 1 point query",
		"reached the department in the same transaction: 425-555-0199 (2 reads and 1 transaction)",
		"the department now shows Smith, Sue, 425-555-0102",
		"Check: 0 copies disagree",
		"before the worker runs, employees: CC-100 CC-100",
		"After the worker: directory manager Jones, Jeffrey; employees: CC-200 CC-200",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.HasPrefix(out.String(), "Started Azurite") && !strings.HasPrefix(out.String(), "Using the account") {
		t.Errorf("output does not say where it ran:\n%s", out.String())
	}
}
