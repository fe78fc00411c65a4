package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/encryption/tour"
	"github.com/tablekit/tablekit/examples/internal/demotest"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program as main does (demo.Run), on the test account
// named in TABLEKIT_CONNECTION_STRING, and checks what the tour says.
func TestRun(t *testing.T) {
	demotest.Run(t, env, tour.Tour,
		"== crypt: client-side encryption",
		"copied Ann's salary into Jonathan's entity: ErrTampered=true",
		"Deleted the table.",
	)
}
