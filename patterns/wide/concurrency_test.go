package wide_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/wide"
)

// sizes gives writer i a version of its own number of properties, so that
// the writers grow and shrink the entity between 1 and 5 rows.
func size(i int) int { return 40 + 60*i }

// Counted is a Bag with a counter every writer increments once.
type Counted struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Count        int64
	Writer       int32
	Props        map[string]any `table:",extra"`
}

// consistent reports what is wrong with a version that should be writer
// c.Writer's, complete: "" when nothing.
func consistent(c Counted) string {
	if len(c.Props) != size(int(c.Writer)) {
		return fmt.Sprintf("writer %d's version has %d properties, want %d", c.Writer, len(c.Props), size(int(c.Writer)))
	}
	prefix := "w" + strconv.Itoa(int(c.Writer)) + "-"
	for name, v := range c.Props {
		if s, _ := v.(string); !strings.HasPrefix(s, prefix) || s[len(prefix):] != "p"+name[1:] {
			return fmt.Sprintf("writer %d's version has %s = %v", c.Writer, name, v)
		}
	}
	return ""
}

// Sixteen writers change one entity at once, each to a version of its own
// size, retrying on ETag conflicts, while a reader that reads one row per
// page races them. Every write is applied exactly once (the counter ends at
// 16), the final state is one writer's complete version, every read is one
// writer's complete version, and no stale row is left.
func TestConcurrentWritersAndReader(t *testing.T) {
	t.Parallel()
	client := env.Table(t)
	w := wrap[Counted](t, client, wide.Config{})
	reader := wrap[Counted](t, client, wide.Config{ReadAttempts: 100, PageSize: 1})
	ctx := t.Context()
	const pk, id = "p", "contended"
	first := Counted{PartitionKey: pk, RowKey: id, Writer: 0, Props: bagOf(pk, id, 0, size(0)).Props}
	if err := w.Insert(ctx, &first); err != nil {
		t.Fatal(err)
	}

	const writers = 16
	var wg sync.WaitGroup
	errs := make([]error, writers)
	results := make([]Counted, writers)
	for i := range writers {
		wg.Go(func() {
			results[i], errs[i] = w.Modify(ctx, pk, id,
				func(c *Counted) error {
					c.Count++
					c.Writer = int32(i)
					c.Props = bagOf(pk, id, i, size(i)).Props
					return nil
				}, entity.ModifyOptions{Mode: entity.Replace, Retry: entity.RetryPolicy{Attempts: 500, BaseDelay: 5 * time.Millisecond, MaxDelay: 100 * time.Millisecond}})
		})
	}
	var reads, tornReads atomic.Int64
	done := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-done:
				return
			default:
			}
			c, err := reader.Get(ctx, pk, id)
			switch {
			case errors.Is(err, wide.ErrTorn):
				tornReads.Add(1) // refused, never returned
			case err != nil:
				t.Errorf("read: %v", err)
				return
			default:
				reads.Add(1)
				if msg := consistent(c); msg != "" {
					t.Errorf("read a torn entity: %s", msg)
				}
			}
		}
	}()
	wg.Wait()
	close(done)
	<-readerDone

	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		} else if msg := consistent(results[i]); msg != "" || results[i].Writer != int32(i) {
			t.Errorf("writer %d returned %q", i, msg)
		}
	}
	final, err := w.Get(ctx, pk, id)
	if err != nil {
		t.Fatal(err)
	}
	if msg := consistent(final); msg != "" {
		t.Errorf("final state: %s", msg)
	}
	if final.Count != writers {
		t.Errorf("counter = %d after %d increments", final.Count, writers)
	}
	n := len(physical(t, client, pk)) - 1
	checkRows(t, client, pk, id, n)
	if reads.Load() == 0 {
		t.Error("the reader never completed a read")
	}
	t.Logf("final: writer %d, %d rows; reader: %d reads, %d refused as torn", final.Writer, n, reads.Load(), tornReads.Load())
}

// hook is a pipeline policy that calls fn before each request is sent.
type hook func(req *policy.Request)

func (h hook) Do(req *policy.Request) (*http.Response, error) {
	h(req)
	return req.Next()
}

// continued reports a query request for a page after the first.
func continued(req *policy.Request) bool {
	return req.Raw().Method == http.MethodGet && req.Raw().URL.Query().Get("NextRowKey") != ""
}

// sharedTable creates a table for clients built from several views of the
// environment, and returns its name.
func sharedTable(t *testing.T) string {
	t.Helper()
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	return name
}

// hookedPair returns a table and a second view of the same table whose
// requests pass through h, reading one row per page.
func hookedPair(t *testing.T, cfg wide.Config, h hook) (w, reader *wide.Table[Counted]) {
	t.Helper()
	name := sharedTable(t)
	cfg.PageSize = 1
	reader = wrap[Counted](t, env.With(h).TableService.NewClient(name), cfg)
	return wrap[Counted](t, env.TableService.NewClient(name), wide.Config{}), reader
}

// A writer that commits between two pages of a read makes the read see
// rows of two versions; the read notices and reads again, and returns the
// new version whole.
func TestReadBetweenPagesReadsAgain(t *testing.T) {
	t.Parallel()
	const pk, id = "p", "torn"
	var (
		w       *wide.Table[Counted]
		fired   atomic.Int32
		queries atomic.Int32
		current Counted
	)
	var writeErr error
	w, reader := hookedPair(t, wide.Config{}, func(req *policy.Request) {
		if req.Raw().Method == http.MethodGet {
			queries.Add(1)
		}
		if continued(req) && fired.Add(1) == 1 {
			// Between page 1 (the head) and page 2: a new version of a
			// different size, every row rewritten.
			next := Counted{PartitionKey: pk, RowKey: id, ETag: current.ETag, Writer: 9, Count: 2, Props: bagOf(pk, id, 9, size(9)).Props}
			writeErr = w.Replace(context.Background(), &next)
		}
	})
	current = Counted{PartitionKey: pk, RowKey: id, Writer: 3, Count: 1, Props: bagOf(pk, id, 3, size(3)).Props}
	if err := w.Insert(t.Context(), &current); err != nil {
		t.Fatal(err)
	}
	got, err := reader.Get(t.Context(), pk, id)
	if err != nil || writeErr != nil {
		t.Fatal(err, writeErr)
	}
	if msg := consistent(got); msg != "" || got.Writer != 9 || got.Count != 2 {
		t.Errorf("read %d of writer %d: %s", got.Count, got.Writer, msg)
	}
	// The first read stopped being useful after its second page; the
	// second read all of the new version's rows, one per page.
	if fired.Load() < 2 || queries.Load() < 3 {
		t.Errorf("hook fired %d times over %d queries: the read did not read again", fired.Load(), queries.Load())
	}
}

// A read that finds a new version between its pages every time gives up
// after Config.ReadAttempts reads with ErrTorn, never returning a mix.
func TestReadThatNeverSettlesFailsTorn(t *testing.T) {
	t.Parallel()
	const pk, id = "p", "storm"
	var w *wide.Table[Counted]
	var rereads atomic.Int32
	var current Counted
	var armed atomic.Bool // a read has begun and not yet reached its second page
	w, reader := hookedPair(t, wide.Config{ReadAttempts: 3}, func(req *policy.Request) {
		if req.Raw().Method != http.MethodGet {
			return
		}
		if !continued(req) {
			armed.Store(true)
		} else if armed.Swap(false) {
			rereads.Add(1)
			current.Count++
			current.Props["P0"] = fmt.Sprintf("w3-p0 %d", current.Count) // changes one row
			if err := w.Replace(context.Background(), &current); err != nil {
				t.Error(err)
			}
		}
	})
	current = Counted{PartitionKey: pk, RowKey: id, Writer: 3, Props: bagOf(pk, id, 3, size(3)).Props}
	if err := w.Insert(t.Context(), &current); err != nil {
		t.Fatal(err)
	}
	_, err := reader.Get(t.Context(), pk, id)
	if !errors.Is(err, wide.ErrTorn) {
		t.Fatalf("Get under a write between every two pages: %v, want ErrTorn", err)
	}
	if rereads.Load() != 3 {
		t.Errorf("%d reads, want 3 (Config.ReadAttempts)", rereads.Load())
	}
}
