// Command tour walks through tablekit against a real Table service: a
// private Azurite it starts itself, or the account named by
// TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL with azidentity's
// default credential).
//
//	make demo            # or: go run ./examples/tour, from the repository
//
// It tells the basics of package entity itself, each step on a table of its
// own that it deletes, then runs every example program under examples/ as
// a program, as a user would with go run, with the account in its
// environment: it builds them with one go build, so it needs the go command
// and the repository. The examples import nothing of the tour; each is a
// program to copy whole into a service.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/tablekit/tablekit/integration/azurite"
)

// step is one stop of the tour: a function of the tour's own, or an example
// program (a directory under examples/).
type step struct {
	title   string
	run     func(ctx context.Context, env *tourEnv, w io.Writer) error
	program string
}

// steps lists the tour in order; each example program has its stop here
// (TestStepsRunEveryExample checks that none is left out).
func steps() []step {
	return []step{
		{title: "Typed entities: a struct, the JSON on the wire, and back", run: typedRoundTrip},
		{title: "Typed CRUD with ETags: optimistic concurrency", run: typedCRUD},
		{title: "Query kinds: point, range, partition scan, table scan", run: queryKinds},
		{title: "Paging: continuation, limits and resumable tokens", run: paging},
		{title: "Entity group transactions: all or nothing, with the failing operation named", run: transactions},
		{title: "Bulk loads: partitions in parallel, an outcome per entity", run: bulkLoad},
		{title: "The quick start as a program: a typed table created, written, read, updated with an ETag, queried", program: "quickstart"},
		{title: "Keys that sort right: a log tail with inverted ticks, compound-key and prefix ranges, buckets", program: "keys"},
		{title: "Several entity types in one partition: departments and employees", program: "resolver"},
		{title: "Shared access signatures: a token for one customer's partition", program: "sas"},
		{title: "Log tail: a user's login attempts, newest first, with one request", program: "logtail"},
		{title: "Compound keys: a device's readings under the device, newest first, a resend stored once", program: "compound"},
		{title: "High-volume delete: login attempts in a table per day, expired by deleting the table", program: "rotation"},
		{title: "Data series: 24 hourly counters in one entity, one point query", program: "dataseries"},
		{title: "Buckets: a day's writes spread over partitions, read back merged", program: "bucket"},
		{title: "Log data in blobs: a storage log in append blobs by service and hour", program: "bloblog"},
		{title: "Wide entities: an employee with 1,000 skill ratings, one transaction, never torn", program: "wide"},
		{title: "Eventually consistent transactions: archive employees through a queue, poison and replay", program: "eventual"},
		{title: "Secondary indexes: employees by email and last name, one transaction, checked and rebuilt", program: "secondaryindex"},
		{title: "Index entities: all employees named Jones, in the partition, elsewhere, in blobs", program: "indexentity"},
		{title: "Denormalisation: the department keeps its manager's name and phone, in one transaction or through a queue", program: "denormalize"},
		{title: "Join in the client: departments from a cache, revalidated by what changed", program: "lookup"},
		{title: "Large entities: an employee with a 5 MiB photo in a blob, checked by its SHA-256", program: "large"},
		{title: "Client-side encryption: authenticated, per-entity keys, rotation, a bulk load sharing content keys", program: "encryption"},
		{title: "Patterns combined: an order service with table-wide lookups, archiving through a queue and an audit log", program: "orders"},
		{title: "Backup, restore and migration: orders exported, restored byte for byte, moved through CSV, migrated v1 to v2", program: "backup"},
	}
}

// timeout bounds the whole tour.
const timeout = 15 * time.Minute

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	err := tour(ctx, os.Getenv, os.Stdout, steps())
	cancel()
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tour:", err)
		if out := azurite.Output(err); out != "" {
			fmt.Fprintln(os.Stderr, out)
		}
		os.Exit(1)
	}
}

// tour connects to the account getenv names (or starts Azurite), runs
// every step of list in order and stops what it started. The example
// programs of list are built one by one in the background, in the order
// they run, while the steps before them run.
func tour(ctx context.Context, getenv func(string) string, w io.Writer, list []step) (err error) {
	bin, err := os.MkdirTemp("", "tablekit-tour-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	var programs []string
	for _, s := range list {
		if s.program != "" {
			programs = append(programs, s.program)
		}
	}
	builds := startBuilds(ctx, bin, programs)
	defer builds.stop()

	env, where, stop, err := connect(ctx, getenv)
	if err != nil {
		return err
	}
	defer func() {
		if serr := stop(); err == nil {
			err = serr
		}
	}()
	fmt.Fprintln(w, where)
	for i, s := range list {
		fmt.Fprintf(w, "\n%d. %s\n%s\n", i+1, s.title, strings.Repeat("-", len(s.title)+3))
		if s.program != "" {
			if err = builds.wait(s.program); err == nil {
				fmt.Fprintf(w, "$ go run ./examples/%s\n", s.program)
				err = runProgram(ctx, bin, s.program, env.vars, w)
			}
		} else {
			err = s.run(ctx, env, w)
		}
		if err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, s.title, err)
		}
	}
	fmt.Fprintln(w, "\nTour complete.")
	return nil
}
