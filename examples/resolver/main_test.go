package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/demotest"
	"github.com/tablekit/tablekit/examples/resolver/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program as main does (demo.Run), on the test account
// named in TABLEKIT_CONNECTION_STRING, and checks what the tour says.
func TestRun(t *testing.T) {
	demotest.Run(t, env, tour.Tour,
		"== resolver: departments and employees in one partition",
		"   *Department SALES   Sales, managed by Jonathan Jones, 3 employees\n",
		"Deleted the table.",
	)
}
