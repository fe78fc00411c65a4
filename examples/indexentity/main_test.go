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
		"== indexentity: all employees named Jones",
		`index entity Sales/lastname_Jones: Members = "000123\n000152\n"`,
		"lastname = Jones in Sales: 000123 Jun Jones (Redmond); 000152 Don Jones (Seattle)\n",
		"lastname = Jones in Sales: 000123 Jun Jones (Redmond)\n",
		"lastname = Smith in Sales: 000140 Ken Smith (Seattle); 000152 Don Smith (Seattle)\n",
		"before the worker ran, Seattle's list names 0 employees",
		"city = Seattle in Sales: 000140 Ken Smith (Seattle); 000152 Don Smith (Seattle); 000161 Don Hall (Seattle)\n",
		"firstname = Don in Sales: 000152 Don Smith (Seattle); 000161 Don Hall (Seattle)\n",
		"missing: the primary holds \"Smith\" and the list does not name it",
		"rebuilt: 2 missing, 2 repaired",
		"Deleted the table, the queues and the container.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.HasPrefix(out.String(), "Started Azurite") && !strings.HasPrefix(out.String(), "Using the account") {
		t.Errorf("output does not say where it ran:\n%s", out.String())
	}
}
