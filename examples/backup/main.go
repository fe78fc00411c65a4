// Command backup runs the backup step of the tour: a table of orders
// exported, restored, moved through CSV and migrated from v1 to v2,
// against a private Azurite it starts — or, when
// TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is set, against that
// account.
//
//	go run ./examples/backup
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tablekit/tablekit/examples/backup/tour"
	"github.com/tablekit/tablekit/integration"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	err := run(ctx, os.Stdout)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "backup example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) (err error) {
	env, err := integration.Start(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, env.Close()) }()
	if env.Live {
		fmt.Fprintln(out, "Using the account from the environment.")
	} else {
		fmt.Fprintf(out, "Started Azurite (pid %d) in %v.\n", env.PID(), env.StartupDuration.Round(time.Millisecond))
	}
	return tour.Tour(ctx, env, out)
}
