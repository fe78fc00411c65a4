package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/compound/tour"
	"github.com/tablekit/tablekit/examples/internal/demotest"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program as main does (demo.Run), on the test account
// named in TABLEKIT_CONNECTION_STRING, and checks what the tour says.
func TestRun(t *testing.T) {
	demotest.Run(t, env, tour.Tour,
		`Review 2012 of employee 123 is RowKey "empid 000123 2012"; all of 123's reviews are RowKey ge "empid 000123 " and lt "empid 000123!"`,
		"   2011: manager 2, peers 3, \"review of 2011\"\n   2012: manager 3",
		"   2014: manager 5, peers 3, \"review of 2014\"\nThose reviews cost 1 storage transaction",
		"Review 2013 of employee 124: manager 5, by 1 point query",
		"from 2012 up to 2014: 2.",
		"A seven-digit id is refused before any request",
	)
}
