package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/denormalize/tour"
	"github.com/tablekit/tablekit/examples/internal/demotest"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program as main does (demo.Run), on the test account
// named in TABLEKIT_CONNECTION_STRING, and checks what the tour says.
func TestRun(t *testing.T) {
	demotest.Run(t, env, tour.Tour,
		"Sales is managed by Jones, Jeff, phone 425-555-0101: 1 point query",
		"reached the department in the same transaction: 425-555-0199 (2 reads and 1 transaction)",
		"the department now shows Smith, Sue, 425-555-0102",
		"Check: 0 copies disagree",
		"before the worker runs, employees: CC-100 CC-100",
		"After the worker: directory manager Jones, Jeffrey; employees: CC-200 CC-200",
	)
}
