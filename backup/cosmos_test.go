package backup_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/cosmos"
	"github.com/tablekit/tablekit/integration/crashtest"
)

// cosmosEnv is env seen through the Cosmos DB profile (query pages in no
// key order, opaque ETags), whether or not TABLEKIT_PROFILE already put
// it in env.
func cosmosEnv() *integration.Env {
	if env.Cosmos() {
		return env
	}
	return env.With(cosmos.New())
}

// An export read through the Cosmos DB profile, whose query pages come in
// reverse order, writes the same bytes as one read from Table storage; one
// killed after k segments and resumed through the profile from its last
// checkpoint ends with those bytes too. (Resuming "after the last key
// written" of pages written as they came lost or repeated entities: 846 and
// 1,535 lines for 1,000.)
func TestExportResumesUnderTheCosmosProfile(t *testing.T) {
	n := sized(1000)
	src := newTable(t)
	load(t, src, n)
	ranges := []backup.Range{{To: "O"}, {From: "O", To: "a"}, {From: "a"}}
	opts := backup.ExportOptions{SegmentEntities: sized(90), Ranges: ranges}
	profiled := viewOf(t, pagedEnv(cosmosEnv()), src.Name())
	whole := export(t, profiled, opts)
	if !env.Cosmos() {
		if storage := export(t, paged(t, src), opts); !bytes.Equal(whole, storage) {
			t.Fatalf("the export through the profile has %d lines, Table storage's %d, or another order", len(lines(t, whole)), len(lines(t, storage)))
		}
	}
	for _, k := range []int{1, 3, 6, 11} {
		t.Run(fmt.Sprintf("after %d segments", k), func(t *testing.T) {
			var out bytes.Buffer
			var last backup.Checkpoint
			seen := 0
			o := opts
			o.Checkpoint = func(c backup.Checkpoint) error {
				if seen++; seen > k {
					return errCrash
				}
				last = c
				return nil
			}
			if _, err := backup.Export(t.Context(), profiled, &out, o); !errors.Is(err, errCrash) {
				t.Fatalf("crashed run: %v", err)
			}
			out.Truncate(int(last.Bytes))
			o = opts
			o.Resume = last.Token
			sum, err := backup.Export(t.Context(), profiled, &out, o)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Entities != int64(n) || !bytes.Equal(out.Bytes(), whole) {
				t.Fatalf("resumed export: %+v, %d lines, want %d and the uncrashed bytes", sum, len(lines(t, out.Bytes())), n)
			}
		})
	}
}

// An export through the Cosmos DB profile killed at every request, before
// it is sent and after the service answered, and resumed through the
// profile from the last checkpoint, ends with the bytes of one that was
// not killed.
func TestExportSurvivesACrashAtEveryRequestUnderTheCosmosProfile(t *testing.T) {
	src := newTable(t)
	load(t, src, sized(1500)) // two pages
	ce := pagedEnv(cosmosEnv())
	profiled := viewOf(t, ce, src.Name())
	opts := backup.ExportOptions{SegmentEntities: sized(300)}
	whole := export(t, profiled, opts)
	crashtest.EveryStep(t, ce, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		var out bytes.Buffer
		var last backup.Checkpoint
		return crashtest.Run{
			Work: func(ctx context.Context, v *integration.Env) error {
				o := opts
				o.Checkpoint = func(c backup.Checkpoint) error { last = c; return nil }
				_, err := backup.Export(ctx, viewOf(t, v, src.Name()), &out, o)
				return err
			},
			Recover: func(ctx context.Context) error {
				if last.Token == "" && bytes.Equal(out.Bytes(), whole) {
					return nil
				}
				out.Truncate(int(last.Bytes))
				o := opts
				o.Resume = last.Token
				_, err := backup.Export(ctx, profiled, &out, o)
				return err
			},
			Check: func(t *testing.T) {
				if !bytes.Equal(out.Bytes(), whole) {
					t.Fatalf("the resumed export has %d bytes, the uncrashed one %d", out.Len(), len(whole))
				}
			},
		}
	}})
}

// rewind makes the service answer the first request for a second page as
// if it were the first: the second page repeats keys of the first, as a
// service whose pages are in no key order may.
type rewind struct{ done atomic.Bool }

func (r *rewind) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	q := raw.URL.Query()
	if raw.Method == http.MethodGet && q.Has("NextPartitionKey") && r.done.CompareAndSwap(false, true) {
		q.Del("NextPartitionKey")
		q.Del("NextRowKey")
		raw.URL.RawQuery = q.Encode()
	}
	return req.Next()
}

// A service whose second page repeats the first's keys stops an export
// that makes checkpoints with an *OrderError naming the keys, before any
// of that page is written: its last checkpoint, resumed from a service in
// order, gives the bytes of an export that met no fault. Without
// checkpoints the export writes what the service returned.
func TestExportStopsAtAPageOutOfKeyOrder(t *testing.T) {
	if env.Cosmos() {
		t.Skip("the profile reverses the rewound page too; the fault is the test's own")
	}
	n, page := sized(1500), sized(1000) // two pages
	src := newTable(t)
	load(t, src, n)
	src = paged(t, src)
	opts := backup.ExportOptions{SegmentEntities: sized(100)}
	whole := export(t, src, opts)

	faulty := viewOf(t, pagedEnv(env).With(&rewind{}), src.Name())
	var out bytes.Buffer
	var last backup.Checkpoint
	o := opts
	o.Checkpoint = func(c backup.Checkpoint) error { last = c; return nil }
	_, err := backup.Export(t.Context(), faulty, &out, o)
	var oe *backup.OrderError
	if !errors.Is(err, backup.ErrUnordered) || !errors.As(err, &oe) {
		t.Fatalf("export over a rewound page: %v, want an *OrderError", err)
	}
	var first struct{ PartitionKey, RowKey string }
	if err := json.Unmarshal([]byte(lines(t, whole)[1]), &first); err != nil {
		t.Fatal(err)
	}
	if oe.PartitionKey != first.PartitionKey || oe.RowKey != first.RowKey {
		t.Errorf("OrderError names %q/%q, want the first page's first key %q/%q", oe.PartitionKey, oe.RowKey, first.PartitionKey, first.RowKey)
	}
	if last.Entities != int64(page) {
		t.Errorf("the last checkpoint counts %d entities, want the first page's %d and nothing of the repeated one", last.Entities, page)
	}
	out.Truncate(int(last.Bytes))
	o = opts
	o.Resume = last.Token
	if _, err := backup.Export(t.Context(), src, &out, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), whole) {
		t.Fatalf("resumed export: %d lines, want %d", len(lines(t, out.Bytes())), len(lines(t, whole)))
	}

	// Without checkpoints: the backup holds what the service returned.
	var plain bytes.Buffer
	sum, err := backup.Export(t.Context(), viewOf(t, pagedEnv(env).With(&rewind{}), src.Name()), &plain, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Entities != int64(n+page) {
		t.Errorf("an export without checkpoints over a rewound page wrote %d entities, want %d and the %d repeated", sum.Entities, n, page)
	}
}
