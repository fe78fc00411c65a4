package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func TestObserve(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obs, err := observe(ctx, env.Account(), Names{Employees: env.TableName(t)})
	if err != nil {
		t.Fatal(err)
	}
	// Three calls: upsert, point get, query — each a span of the client and
	// of its HTTP try, each logged, each billed once.
	for _, want := range []string{"Client.UpsertEntity", "Client.GetEntity"} {
		if !contains(obs.Spans, want) {
			t.Errorf("no span %q among %v", want, obs.Spans)
		}
	}
	var requests int
	for _, l := range obs.Logs {
		if strings.HasPrefix(l, "Request: ==> OUTGOING REQUEST") {
			requests++
		}
	}
	if requests < 3 {
		t.Errorf("%d request log lines, want at least 3: %q", requests, obs.Logs)
	}
	if obs.Cost.Count(cost.Table, cost.OpUpsert) != 1 || obs.Cost.Total() != 3 {
		t.Errorf("cost %v, want 1 upsert and 3 transactions", obs.Cost)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRun runs the program's story as main does, on the test account with
// a table of its own.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, env.Account(), Names{Employees: env.TableName(t)}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"azcore log: ", "OpenTelemetry spans (azotel): ", "storage cost: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
