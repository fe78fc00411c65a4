// Command devserver runs the Azurite that tablekit is tested with on the
// ports that "UseDevelopmentStorage=true" stands for (10000 blob, 10001
// queue, 10002 table, on 127.0.0.1), in memory, until it is interrupted,
// installing it first when no Azurite is found (see package azurite):
//
//	go run github.com/tablekit/tablekit/integration/azurite/devserver
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true'   # in another shell
//
// With -install it only makes sure Azurite is there, installing it with its
// progress shown, and prints the executable's path: the one-time step that
// tests would otherwise take on first use.
//
//	go run github.com/tablekit/tablekit/integration/azurite/devserver -install
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tablekit/tablekit/integration/azurite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("devserver", flag.ContinueOnError)
	flags.SetOutput(stderr)
	install := flags.Bool("install", false, "install the pinned Azurite when none is found, print its path and exit")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "devserver: unexpected arguments %q\n", flags.Args())
		return 2
	}
	if *install {
		bin, err := azurite.Find(ctx, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "devserver:", err)
			return 1
		}
		fmt.Fprintln(stdout, bin)
		return 0
	}
	srv, err := azurite.Start(ctx, &azurite.Options{BlobPort: 10000, QueuePort: 10001, TablePort: 10002, Progress: stderr})
	if err != nil {
		fmt.Fprintln(stderr, "devserver:", err)
		if out := azurite.Output(err); out != "" {
			fmt.Fprintln(stderr, out)
		}
		return 1
	}
	fmt.Fprintf(stdout, "Azurite (pid %d) serves UseDevelopmentStorage=true: tables %s, queues %s, blobs %s. Stop it with Ctrl-C.\n",
		srv.PID(), srv.TableEndpoint, srv.QueueEndpoint, srv.BlobEndpoint)
	<-ctx.Done()
	if err := srv.Close(); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "devserver:", err)
		return 1
	}
	return 0
}
