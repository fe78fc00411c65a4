// Command tour walks through tablekit against a real Table service: a
// private Azurite it starts itself, or the account named by
// TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL with azidentity's
// default credential). Each step creates its own table and deletes it.
//
//	make demo            # or: go run ./examples/tour
package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	backuptour "github.com/tablekit/tablekit/examples/backup/tour"
	bloblogtour "github.com/tablekit/tablekit/examples/bloblog/tour"
	buckettour "github.com/tablekit/tablekit/examples/bucket/tour"
	compoundtour "github.com/tablekit/tablekit/examples/compound/tour"
	dataseriestour "github.com/tablekit/tablekit/examples/dataseries/tour"
	"github.com/tablekit/tablekit/examples/demo"
	denormalizetour "github.com/tablekit/tablekit/examples/denormalize/tour"
	encryptiontour "github.com/tablekit/tablekit/examples/encryption/tour"
	eventualtour "github.com/tablekit/tablekit/examples/eventual/tour"
	indexentitytour "github.com/tablekit/tablekit/examples/indexentity/tour"
	largetour "github.com/tablekit/tablekit/examples/large/tour"
	logtailtour "github.com/tablekit/tablekit/examples/logtail/tour"
	lookuptour "github.com/tablekit/tablekit/examples/lookup/tour"
	orderstour "github.com/tablekit/tablekit/examples/orders/tour"
	resolvertour "github.com/tablekit/tablekit/examples/resolver/tour"
	rotationtour "github.com/tablekit/tablekit/examples/rotation/tour"
	sastour "github.com/tablekit/tablekit/examples/sas/tour"
	secondaryindextour "github.com/tablekit/tablekit/examples/secondaryindex/tour"
	widetour "github.com/tablekit/tablekit/examples/wide/tour"
)

// step is one stop of the tour. It gets the whole account (tables, queues
// and blobs), as the patterns that span services need.
type step struct {
	title string
	run   demo.Tour
}

// steps lists the tour in order; each pattern package adds its stop here.
func steps() []step {
	return []step{
		{"Typed entities: a struct, the JSON on the wire, and back", typedRoundTrip},
		{"Typed CRUD with ETags: optimistic concurrency", typedCRUD},
		{"Query kinds: point, range, partition scan, table scan", queryKinds},
		{"Paging: continuation, limits and resumable tokens", paging},
		{"Entity group transactions: all or nothing, with the failing operation named", transactions},
		{"Bulk loads: partitions in parallel, an outcome per entity", bulkLoad},
		{"Keys that sort right: a log tail with inverted ticks, a compound-key range", keyOrder},
		{"Several entity types in one partition: departments and employees", resolvertour.Tour},
		{"Shared access signatures: a token for one user's partition", sastour.Tour},
		{"Log tail: a user's login attempts, newest first, with one request", logtailtour.Tour},
		{"High-volume delete: login attempts in a table per day, expired by deleting the table", rotationtour.Tour},
		{"Data series: 24 hourly counters in one entity, one point query", dataseriestour.Tour},
		{"Buckets: a day's writes spread over partitions, read back merged", buckettour.Tour},
		{"Log data in blobs: a storage log in append blobs by service and hour", bloblogtour.Tour},
		{"Wide entities: an employee with 1,000 skill ratings, one transaction, never torn", widetour.Tour},
		{"Eventually consistent transactions: archive employees through a queue, crash, recover", eventualtour.Tour},
		{"Secondary indexes: employees by email and last name, one transaction, checked and rebuilt", secondaryindextour.Tour},
		{"Index entities: all employees named Jones, in the partition, elsewhere, in blobs", indexentitytour.Tour},
		{"Denormalisation: the department keeps its manager's name and phone, in one transaction or through a queue", denormalizetour.Tour},
		{"Compound keys: an employee's reviews by year, one point query or one range", compoundtour.Tour},
		{"Join in the client: departments from a cache, revalidated by what changed", lookuptour.Tour},
		{"Large entities: an employee with a 5 MiB photo in a blob, checked by its SHA-256", largetour.Tour},
		{"Client-side encryption: authenticated, per-entity keys, rotation, a bulk load sharing content keys", encryptiontour.Tour},
		{"Patterns combined: an order service with table-wide lookups, archiving through a queue and an audit log", orderstour.Tour},
		{"Backup, restore and migration: orders exported, restored byte for byte, moved through CSV, migrated v1 to v2", backuptour.Tour},
	}
}

func main() { demo.Main("tour", tour) }

// tour runs every step, in order, as one demo.Tour.
func tour(ctx context.Context, env *demo.Env, w io.Writer) error {
	return runSteps(ctx, env, w, steps())
}

func runSteps(ctx context.Context, env *demo.Env, w io.Writer, list []step) error {
	for i, s := range list {
		fmt.Fprintf(w, "\n%d. %s\n%s\n", i+1, s.title, strings.Repeat("-", len(s.title)+3))
		if err := s.run(ctx, env, w); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, s.title, err)
		}
	}
	fmt.Fprintln(w, "\nTour complete.")
	return nil
}

// newTable creates a table with a unique name and returns it with a
// function that deletes it.
func newTable(ctx context.Context, env *demo.Env, prefix string) (*aztables.Client, func(), error) {
	client, drop, err := env.ScratchTable(ctx, prefix)
	if err != nil {
		return nil, nil, err
	}
	return client, func() { _ = drop() }, nil
}

// newTypedTable is newTable with a typed view of the table.
func newTypedTable[T any](ctx context.Context, env *demo.Env, prefix string) (*entity.Table[T], func(), error) {
	client, drop, err := newTable(ctx, env, prefix)
	if err != nil {
		return nil, nil, err
	}
	tbl, err := entity.NewTable[T](client)
	if err != nil {
		drop()
		return nil, nil, err
	}
	return tbl, drop, nil
}
