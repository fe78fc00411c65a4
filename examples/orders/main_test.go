package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/orders/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// testAccount is the environment that main reads, naming the test account
// by its explicit connection string (or, for a live account reached with a
// credential, its URL).
func testAccount(name string) string {
	return map[string]string{demo.EnvConnectionString: env.ConnectionString, demo.EnvAccountURL: env.TableEndpoint}[name]
}

// TestRun runs the program as main does (demo.Run), on the test account
// named in TABLEKIT_CONNECTION_STRING, and checks what the tour says.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out strings.Builder
	if err := demo.Run(ctx, testAccount, &out, tour.Tour); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"== orders: an order service combining patterns",
		"contoso's orders, newest first: 10042 (May 1 11:00) 10040 (May 1 09:00) 10039 (Apr 29 09:00)\n",
		"Order 10042, found table-wide: customer contoso, May 1 11:00, 120.00, status pending.\n",
		"A second order 10042, for fabrikam, is refused: secondaryindex: ",
		"Pending orders, table-wide: 10042 (contoso), 10040 (contoso), 10039 (contoso), 10041 (fabrikam).\n",
		"Pending orders, table-wide: 10039 (contoso), 10041 (fabrikam).\n",
		"contoso's audit log, newest first: 10042 delivered, 10042 shipped, 10040 shipped, 10039 placed, 10042 placed, 10040 placed.\n",
		"Check read every order and every entry: no drift.",
		"Deleted the tables and the queue.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.HasPrefix(out.String(), "Using the account ") {
		t.Errorf("output does not say it ran on the account named:\n%s", out.String())
	}
}
