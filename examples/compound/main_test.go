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
		`Review 2012 of employee 123 is RowKey "empid 000123 2012"; all of 123's reviews are RowKey ge "empid 000123 " and lt "empid 000123!"`,
		"   2011: manager 2, peers 3, \"review of 2011\"\n   2012: manager 3",
		"   2014: manager 5, peers 3, \"review of 2014\"\nThose reviews cost 1 storage transaction",
		"Review 2013 of employee 124: manager 5, by 1 point query",
		"from 2012 up to 2014: 2.",
		"A seven-digit id is refused before any request",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.HasPrefix(out.String(), "Started Azurite") && !strings.HasPrefix(out.String(), "Using the account") {
		t.Errorf("output does not say where it ran:\n%s", out.String())
	}
}
