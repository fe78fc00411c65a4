package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/demotest"
	"github.com/tablekit/tablekit/examples/lookup/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program as main does (demo.Run), on the test account
// named in TABLEKIT_CONNECTION_STRING, and checks what the tour says.
func TestRun(t *testing.T) {
	demotest.Run(t, env, tour.Tour,
		"Joined 200 employees with their departments: 40 employees in CC-100, 1 storage transaction",
		`within the TTL the cache still says "Research"`,
		`After Refresh: "Research & Development"; the revalidation asked only for entities changed since`,
		"of 5, in 1 query",
	)
}
