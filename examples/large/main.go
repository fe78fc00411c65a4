// Command large runs the large-entities step of the tour: an employee
// with a 5 MiB photo, more than an entity of the Table service may hold,
// kept in a blob that the entity references by name, size and SHA-256
// (design guide §6.11), against a private Azurite it starts — or, when
// TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is set, against
// that account.
//
//	go run ./examples/large
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tablekit/tablekit/examples/large/tour"
	"github.com/tablekit/tablekit/integration"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	err := run(ctx, os.Stdout)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "large example:", err)
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
