package bucket_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/bucket"
)

// 8 writers spread 4,000 time-ordered events over 16 buckets while the same
// events go to one partition: the merged Tail equals the single partition's
// Tail, the merged read equals the single partition's read, and every bucket
// took a share of the writes.
func TestMergedTailEqualsSinglePartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	tbl := newTable(t, env.With(meter.Policy()))
	spread := newSpread(t, tbl, bucket.Config{Buckets: 16})
	const writers, rounds, perCall = 8, 10, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var seq keys.Sequencer
			for r := range rounds {
				events := make([]*Event, perCall)
				single := make([]Event, perCall)
				for i := range events {
					at, s := seq.Next(time.Now())
					rk := keys.InvertedTicksSeq(at, s) + fmt.Sprintf("_w%d", w)
					events[i] = &Event{RowKey: rk, Writer: int32(w), N: int32(r*perCall + i)}
					single[i] = Event{PartitionKey: "single", RowKey: rk, Writer: int32(w), N: int32(r*perCall + i)}
				}
				if err := spread.Write(ctx, "log", events...); err != nil {
					errs <- err
					return
				}
				if _, err := tbl.BulkWrite(ctx, single, entity.BulkOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	one := func(limit int) []Event {
		var out []Event
		for e, err := range tbl.Query(ctx, entity.Query{Filter: filter.PK("single"), Limit: limit, PageSize: min(limit, 1000)}) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		return out
	}
	same := func(a, b []Event) bool {
		return slices.EqualFunc(a, b, func(x, y Event) bool { return x.RowKey == y.RowKey && x.Writer == y.Writer && x.N == y.N })
	}
	for _, n := range []int{1, 50, 100} {
		before := meter.Snapshot()
		tail, err := spread.Tail(ctx, "log", n)
		used := meter.Snapshot().Sub(before)
		if err != nil {
			t.Fatal(err)
		}
		if want := one(n); !same(tail, want) || len(tail) != n {
			t.Fatalf("Tail(%d) over 16 buckets differs from Tail of one partition", n)
		}
		if used.Total() != 16 {
			t.Errorf("Tail(%d) took %v, want one query per bucket", n, used)
		}
	}
	var all []Event
	perBucket := map[string]int{}
	for e, err := range spread.Query(ctx, "log", entity.Query{PageSize: 37}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
		perBucket[e.PartitionKey]++
		if e.PartitionKey != spread.Partition("log", e.RowKey) {
			t.Fatalf("%q is in %q, want %q", e.RowKey, e.PartitionKey, spread.Partition("log", e.RowKey))
		}
	}
	if want := one(0); !same(all, want) || len(all) != writers*rounds*perCall {
		t.Fatalf("merged read: %d events, want the single partition's %d in the same order", len(all), len(want))
	}
	// 4,000 events over 16 buckets: 250 each on average; a fair hash keeps
	// every bucket well within a factor of 1.5.
	if len(perBucket) != 16 {
		t.Fatalf("%d buckets used, want 16", len(perBucket))
	}
	for pk, n := range perBucket {
		if n < 170 || n > 330 {
			t.Errorf("bucket %q holds %d of 4,000 events", pk, n)
		}
	}
	// A range of RowKeys, merged, equals the same range of one partition.
	from, to := all[1000].RowKey, all[1400].RowKey
	var ranged []Event
	for e, err := range spread.Query(ctx, "log", entity.Query{Filter: filter.RowKeyRange(from, to)}) {
		if err != nil {
			t.Fatal(err)
		}
		ranged = append(ranged, e)
	}
	if !same(ranged, all[1000:1400]) {
		t.Fatalf("range read: %d events, want 400", len(ranged))
	}
	got, err := spread.Get(ctx, "log", all[7].RowKey)
	if err != nil || got.N != all[7].N {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := spread.Get(ctx, "log", "nothing"); !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("Get(missing) = %v, want ErrNotFound", err)
	}
}

// Bad arguments are refused with an *ArgError before any request: the
// table points at a closed port, so a request would fail differently.
func TestInvalidInputSendsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, err := entity.NewTableFromConnectionString[Event](
		"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+
			"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"+
			"TableEndpoint=http://127.0.0.1:1/devstoreaccount1/", "nowhere", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newSpread(t, tbl, bucket.Config{})
	errOf := func(_ any, err error) error { return err }
	firstErr := func(seq func(func(Event, error) bool)) error {
		for _, err := range seq {
			return err
		}
		return nil
	}
	cases := map[string]error{
		"Buckets 1001":    errOf(bucket.New(tbl, bucket.Config{Buckets: 1001})),
		"Buckets -1":      errOf(bucket.New(tbl, bucket.Config{Buckets: -1})),
		"Mode delete":     errOf(bucket.New(tbl, bucket.Config{Mode: entity.OpDelete})),
		"nil table":       errOf(bucket.New[Event](nil, bucket.Config{})),
		"name with '/'":   s.Write(ctx, "a/b", &Event{RowKey: "r"}),
		"name too long":   s.Write(ctx, strings.Repeat("n", keys.MaxKeyLength), &Event{RowKey: "r"}),
		"RowKey with '#'": s.Write(ctx, "log", &Event{RowKey: "a#b"}),
		"nil entry":       s.Write(ctx, "log", &Event{RowKey: "a"}, nil),
		"Get row key":     errOf(s.Get(ctx, "log", "a?b")),
		"Tail n 0":        errOf(s.Tail(ctx, "log", 0)),
		"Query on a PK":   firstErr(s.Query(ctx, "log", entity.Query{Filter: filter.PK("x")})),
		"Query bad name":  firstErr(s.Query(ctx, "log\\", entity.Query{})),
		"Tail bad name":   errOf(s.Tail(ctx, "\x00", 10)),
	}
	for name, err := range cases {
		var ae *bucket.ArgError
		var ce *bucket.ConfigError // New's arguments
		if !errors.As(err, &ae) && !errors.As(err, &ce) || !errors.Is(err, bucket.ErrInvalid) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s: %v; want an *ArgError or *ConfigError matching ErrInvalid", name, err)
		}
	}
}

// Stamped is an entry whose type keeps its ETag.
type Stamped struct {
	PartitionKey, RowKey string
	ETag                 string
	N                    int32
}

// One entry among many that cannot be written (Insert mode, the entry is
// already stored): Write names exactly that entry, with its keys and its
// own error, writes every other entry and gives each its ETag.
func TestWriteNamesTheEntriesNotWritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, err := entity.NewTable[Stamped](env.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	spread, err := bucket.New(tbl, bucket.Config{Buckets: 4, Mode: entity.OpInsert})
	if err != nil {
		t.Fatal(err)
	}
	taken := &Stamped{RowKey: "r-017", N: -1}
	if err := spread.Write(ctx, "log", taken); err != nil {
		t.Fatal(err)
	}
	events := make([]*Stamped, 40)
	for i := range events {
		events[i] = &Stamped{RowKey: fmt.Sprintf("r-%03d", i), N: int32(i)}
	}
	err = spread.Write(ctx, "log", events...)
	var be *bucket.Error
	if !errors.As(err, &be) || len(be.NotWritten) != 1 {
		t.Fatalf("Write: %v, want an *Error naming one entry", err)
	}
	nw := be.NotWritten[0]
	if nw.RowKey != "r-017" || nw.PartitionKey != spread.Partition("log", "r-017") || !errors.Is(nw.Err, entity.ErrAlreadyExists) {
		t.Fatalf("not written: %+v", nw)
	}
	for i, e := range events {
		got, gerr := tbl.Get(ctx, spread.Partition("log", e.RowKey), e.RowKey)
		if gerr != nil {
			t.Fatal(gerr)
		}
		switch {
		case i == 17 && got.N != -1:
			t.Errorf("the stored entry r-017 was overwritten: N %d", got.N)
		case i != 17 && (got.N != int32(i) || e.ETag == "" || e.ETag != got.ETag):
			t.Errorf("entry %d: stored N %d ETag %q, the entry's ETag %q", i, got.N, got.ETag, e.ETag)
		}
	}
}
