package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/sas/tour"
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
	for _, want := range []string{"== sas: a token for one user's partition", "Deleted the table."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.HasPrefix(out.String(), "Using the account ") {
		t.Errorf("output does not say it ran on the account named:\n%s", out.String())
	}
}
