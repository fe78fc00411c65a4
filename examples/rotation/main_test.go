package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/demotest"
	"github.com/tablekit/tablekit/examples/rotation/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program as main does (demo.Run), on the test account
// named in TABLEKIT_CONNECTION_STRING, and checks what the tour says.
func TestRun(t *testing.T) {
	demotest.Run(t, env, tour.Tour,
		"== rotation: login attempts in a table per day",
		"Expired 2031-07-29: 200 attempts gone with table logins20310729",
		"(errors.Is ErrExpired: true)",
	)
}
