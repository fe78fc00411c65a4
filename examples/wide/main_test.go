package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/demotest"
	"github.com/tablekit/tablekit/examples/wide/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program as main does (demo.Run), on the test account
// named in TABLEKIT_CONNECTION_STRING, and checks what the tour says.
func TestRun(t *testing.T) {
	demotest.Run(t, env, tour.Tour,
		"== wide: an employee with 1,000 skill ratings",
		"in 1 storage transaction",
		"Deleted the table.",
	)
}
