package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/bloblog/tour"
	"github.com/tablekit/tablekit/examples/internal/demotest"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program as main does (demo.Run), on the test account
// named in TABLEKIT_CONNECTION_STRING, and checks what the tour says.
func TestRun(t *testing.T) {
	demotest.Run(t, env, tour.Tour,
		"== bloblog: a storage log in append blobs by service and hour",
		"Reading 19:20 to 19:35: 750 records.",
		"message=0004749\n",
	)
}
