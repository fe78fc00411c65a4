package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/integration"
)

func TestObserve(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env, err := integration.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	obs, err := observe(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	// Three calls: insert, point get, query — each a span of the client and
	// of its HTTP try, each logged, each billed once.
	for _, want := range []string{"Client.AddEntity", "Client.GetEntity"} {
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
	if obs.Cost.Count(cost.Table, cost.OpInsert) != 1 || obs.Cost.Total() != 3 {
		t.Errorf("cost %v, want 1 insert and 3 transactions", obs.Cost)
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
