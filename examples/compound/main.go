// Command compound runs the compound-key step of the tour: the design
// guide's yearly reviews of each employee under compound RowKeys (§6.6),
// against a private Azurite it starts, or, when TABLEKIT_CONNECTION_STRING
// (or TABLEKIT_ACCOUNT_URL) is set, against that account.
//
//	go run ./examples/compound
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tablekit/tablekit/examples/compound/tour"
	"github.com/tablekit/tablekit/integration"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	err := run(ctx, os.Stdout)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "compound example:", err)
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
