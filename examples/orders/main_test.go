package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/demotest"
	"github.com/tablekit/tablekit/examples/orders/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program as main does (demo.Run), on the test account
// named in TABLEKIT_CONNECTION_STRING, and checks what the tour says.
func TestRun(t *testing.T) {
	demotest.Run(t, env, tour.Tour,
		"== orders: an order service combining patterns",
		"contoso's orders, newest first: 10042 (May 1 11:00) 10040 (May 1 09:00) 10039 (Apr 29 09:00)\n",
		"Order 10042, found table-wide: customer contoso, May 1 11:00, 120.00, status pending.\n",
		"A second order 10042, for fabrikam, is refused: secondaryindex: ",
		"Pending orders, table-wide: 10042 (contoso), 10040 (contoso), 10039 (contoso), 10041 (fabrikam).\n",
		"Pending orders, table-wide: 10039 (contoso), 10041 (fabrikam).\n",
		"contoso's audit log, newest first: 10042 delivered, 10042 shipped, 10040 shipped, 10039 placed, 10042 placed, 10040 placed.\n",
		"Check read every order and every entry: no drift.",
		"Deleted the tables and the queue.",
	)
}
