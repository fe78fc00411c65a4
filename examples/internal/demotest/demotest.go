// Package demotest is the test kit of tablekit's example programs: the
// environment a program's main reads, naming the test account, and the
// test every example runs — its tour as main runs it, on that account,
// with the lines its story must tell.
//
// It imports package testing and package integration, so only the
// examples' tests import it; the programs themselves (main and their
// tours) link neither (package demo).
package demotest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/integration"
)

// Getenv is the environment that main reads (demo.Run's getenv), naming
// env's account by its explicit connection string (or, for a live account
// reached with a credential, its URL).
func Getenv(env *integration.Env) func(string) string {
	vars := map[string]string{demo.EnvConnectionString: env.ConnectionString, demo.EnvAccountURL: env.TableEndpoint}
	return func(name string) string { return vars[name] }
}

// Timeout bounds a tour run by Run.
const Timeout = 3 * time.Minute

// Run runs tour as main does (demo.Run), on env's account, within Timeout,
// and fails t unless it succeeds, its output starts by naming the account
// ("Using the account ") and contains every line of want. It returns the
// output.
func Run(t *testing.T, env *integration.Env, tour demo.Tour, want ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	var out strings.Builder
	if err := demo.Run(ctx, Getenv(env), &out, tour); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
	if !strings.HasPrefix(out.String(), "Using the account ") {
		t.Errorf("output does not say it ran on the account named:\n%s", out.String())
	}
	return out.String()
}
