package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/integration/azurite"
)

// Environment variables that name the account to run on.
const (
	EnvConnectionString = "TABLEKIT_CONNECTION_STRING"
	EnvAccountURL       = "TABLEKIT_ACCOUNT_URL"
)

// Timeout bounds a run by Main.
const Timeout = 10 * time.Minute

// Tour is one example's story, told to out, on env's account.
type Tour func(ctx context.Context, env *Env, out io.Writer) error

// Main runs tour as a program: Run with the process's environment and
// standard output, for at most Timeout or until interrupted. On failure it
// prints name and the error to standard error and exits with status 1.
func Main(name string, tour Tour) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	err := Run(ctx, os.Getenv, os.Stdout, tour)
	cancel()
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		if out := azurite.Output(err); out != "" {
			fmt.Fprintln(os.Stderr, out)
		}
		os.Exit(1)
	}
}

// Run connects to the account getenv names (Connect), says which on out,
// runs tour on it and stops what Connect started.
func Run(ctx context.Context, getenv func(string) string, out io.Writer, tour Tour) (err error) {
	env, where, stop, err := Connect(ctx, getenv)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stop()) }()
	fmt.Fprintln(out, where)
	return tour(ctx, env, out)
}

// Connect returns the Env of the account that getenv names (see the
// package documentation), a sentence saying which, and a function that
// stops what Connect started (the private Azurite).
func Connect(ctx context.Context, getenv func(string) string) (env *Env, where string, stop func() error, err error) {
	nothing := func() error { return nil }
	if cs := getenv(EnvConnectionString); cs != "" {
		acct, err := account.NewFromConnectionString(cs, nil)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s: %w", EnvConnectionString, err)
		}
		return New(acct, cs), fmt.Sprintf("Using the account in %s (tables at %s).", EnvConnectionString, acct.Endpoints().Table), nothing, nil
	}
	if u := getenv(EnvAccountURL); u != "" {
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s: %w", EnvAccountURL, err)
		}
		acct, err := account.New(u, cred, nil)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s: %w", EnvAccountURL, err)
		}
		return New(acct, ""), fmt.Sprintf("Using the account at %s with azidentity's default credential.", acct.Endpoints().Table), nothing, nil
	}
	srv, err := azurite.Start(ctx, nil)
	if err != nil {
		return nil, "", nil, fmt.Errorf("no %s or %s set, and a private Azurite cannot start: %w", EnvConnectionString, EnvAccountURL, err)
	}
	acct, err := account.NewFromConnectionString(srv.ConnectionString, nil)
	if err != nil {
		return nil, "", nil, errors.Join(err, srv.Close())
	}
	return New(acct, srv.ConnectionString), fmt.Sprintf("Started Azurite (pid %d) in %v.", srv.PID(), srv.StartupDuration.Round(time.Millisecond)), srv.Close, nil
}
