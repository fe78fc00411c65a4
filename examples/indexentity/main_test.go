package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/indexentity/tour"
	"github.com/tablekit/tablekit/examples/internal/demotest"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program as main does (demo.Run), on the test account
// named in TABLEKIT_CONNECTION_STRING, and checks what the tour says.
func TestRun(t *testing.T) {
	demotest.Run(t, env, tour.Tour,
		"== indexentity: all employees named Jones",
		`index entity Sales/lastname_Jones: Members = "000123\n000152\n"`,
		"lastname = Jones in Sales: 000123 Jun Jones (Redmond); 000152 Don Jones (Seattle)\n",
		"lastname = Jones in Sales: 000123 Jun Jones (Redmond)\n",
		"lastname = Smith in Sales: 000140 Ken Smith (Seattle); 000152 Don Smith (Seattle)\n",
		"before the worker ran, Seattle's list names 0 employees",
		"city = Seattle in Sales: 000140 Ken Smith (Seattle); 000152 Don Smith (Seattle); 000161 Don Hall (Seattle)\n",
		"firstname = Don in Sales: 000152 Don Smith (Seattle); 000161 Don Hall (Seattle)\n",
		"missing: the primary holds \"Smith\" and the list does not name it",
		"rebuilt: 2 missing, 2 repaired",
		"Deleted the table, the queues and the container.",
	)
}
