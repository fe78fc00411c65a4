package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/demotest"
	"github.com/tablekit/tablekit/examples/sas/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program as main does (demo.Run), on the test account
// named in TABLEKIT_CONNECTION_STRING, and checks what the tour says.
func TestRun(t *testing.T) {
	demotest.Run(t, env, tour.Tour,
		"== sas: a token for one user's partition", "Deleted the table.",
	)
}
