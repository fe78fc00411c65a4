package logtail_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// 10,000 entries from 8 writers at once, each a Log of its own (as 8
// processes would be), through single appends and transactions: Tail(50) is
// exactly the 50 newest by the writers' clocks, newest first; every entry is
// stored once, none lost.
func TestTailOfConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t)
	const writers, rounds, perBatch = 8, 25, 49 // 8 × 25 × (1 + 49) = 10,000
	start := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

	written := make([][]string, writers) // each writer's keys, in append order
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Every writer's clock ticks in microseconds from the same start,
			// so the writers' entries interleave in time and collide on ticks.
			l, err := logtail.New(tbl, logtail.Config{WriterID: fmt.Sprintf("w%d", w), Now: stepClock(start, time.Microsecond)})
			if err != nil {
				errs <- err
				return
			}
			n := int32(0)
			next := func() *Attempt { n++; return &Attempt{User: "alice", Writer: int32(w), N: n} }
			for range rounds {
				one := next()
				if err := l.Append(ctx, "alice", one); err != nil {
					errs <- err
					return
				}
				batch := make([]*Attempt, perBatch)
				for i := range batch {
					batch[i] = next()
				}
				if err := l.Append(ctx, "alice", batch...); err != nil {
					errs <- err
					return
				}
				written[w] = append(written[w], one.RowKey)
				for _, e := range batch {
					written[w] = append(written[w], e.RowKey)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	var all []string
	for w, ks := range written {
		// A writer's own keys decrease strictly: each entry sorts before
		// (is newer than) the one appended before it.
		for i := 1; i < len(ks); i++ {
			if keys.Compare(ks[i], ks[i-1]) >= 0 {
				t.Fatalf("writer %d: key %d %q does not sort before key %d %q", w, i, ks[i], i-1, ks[i-1])
			}
		}
		all = append(all, ks...)
	}
	slices.SortFunc(all, keys.Compare)
	if len(slices.Compact(slices.Clone(all))) != writers*rounds*(1+perBatch) {
		t.Fatal("two entries got the same key")
	}

	l := newLog(t, tbl, logtail.Config{})
	tail, err := l.Tail(ctx, "alice", 50)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rowKeys(tail), all[:50]; !slices.Equal(got, want) {
		t.Fatalf("Tail(50) =\n%q\nwant the 50 newest\n%q", got, want)
	}
	// Newest first by the writers' clocks.
	for i := 1; i < len(tail); i++ {
		a, _ := logtail.ParseKey(tail[i-1].RowKey)
		b, _ := logtail.ParseKey(tail[i].RowKey)
		if a.Time.Before(b.Time) {
			t.Fatalf("Tail: entry %d (%v) is older than entry %d (%v)", i-1, a.Time, i, b.Time)
		}
	}
	// Everything is stored, once.
	var stored []string
	for e, err := range l.Since(ctx, "alice", time.Time{}) {
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, e.RowKey)
	}
	if !slices.Equal(stored, all) {
		t.Fatalf("the log holds %d entries, want exactly the %d written", len(stored), len(all))
	}
}

// Since, Between and Page select by the entries' instants, newest first;
// pages resume from a stored token in another Log and are not shifted by
// entries appended meanwhile.
func TestRangesAndPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t)
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	l := newLog(t, tbl, logtail.Config{Now: stepClock(t0, time.Second)})
	for i := range 30 { // entry i at t0 + i s
		if err := l.Append(ctx, "bob", &Attempt{N: int32(i)}); err != nil {
			t.Fatal(err)
		}
	}
	ns := func(seq func(func(Attempt, error) bool)) []int32 {
		var out []int32
		for e, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e.N)
		}
		return out
	}
	desc := func(from, to int32) []int32 { // from down to to, inclusive
		var out []int32
		for n := from; n >= to; n-- {
			out = append(out, n)
		}
		return out
	}
	if got, want := ns(l.Since(ctx, "bob", t0.Add(20*time.Second))), desc(29, 20); !slices.Equal(got, want) {
		t.Errorf("Since(t0+20s) = %v, want %v", got, want)
	}
	if got, want := ns(l.Between(ctx, "bob", t0.Add(5*time.Second), t0.Add(10*time.Second))), desc(9, 5); !slices.Equal(got, want) {
		t.Errorf("Between(t0+5s, t0+10s) = %v, want %v", got, want)
	}
	// One tick after an entry excludes it from Since, and includes it in a
	// Between that ends there.
	if got, want := ns(l.Since(ctx, "bob", t0.Add(29*time.Second+100))), []int32(nil); !slices.Equal(got, want) {
		t.Errorf("Since(after the newest) = %v, want nothing", got)
	}
	if got, want := ns(l.Between(ctx, "bob", t0.Add(29*time.Second), t0.Add(29*time.Second+100))), []int32{29}; !slices.Equal(got, want) {
		t.Errorf("Between(the newest's tick) = %v, want %v", got, want)
	}
	if got := ns(l.Between(ctx, "bob", t0.Add(10*time.Second), t0.Add(5*time.Second))); got != nil {
		t.Errorf("Between(to before from) = %v, want nothing", got)
	}

	// Pages of 7: 29…23, then, from a token kept elsewhere, 22…16, and so on.
	var got []int32
	token := ""
	for i := 0; ; i++ {
		reader := newLog(t, tbl, logtail.Config{}) // a fresh process each page
		p, err := reader.Page(ctx, "bob", 7, token)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Items {
			got = append(got, e.N)
		}
		if i == 0 { // newer entries arrive while the user reads
			if err := l.Append(ctx, "bob", &Attempt{N: 100}); err != nil {
				t.Fatal(err)
			}
		}
		if p.Next == "" {
			break
		}
		token = p.Next
	}
	if want := desc(29, 0); !slices.Equal(got, want) {
		t.Errorf("pages = %v, want %v", got, want)
	}
	if _, err := l.Page(ctx, "bob", 7, "not a token"); !errors.Is(err, entity.ErrInvalidToken) {
		t.Errorf("Page(bad token) = %v, want ErrInvalidToken", err)
	}
}

// PlainKeys writes exactly the guide's C# key, including the boundary
// instants, and moves an entry made in the tick of the previous one to the
// next tick; a sequenced key starts with the same 19 digits.
func TestKeysEqualTheCSharpFormula(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t)
	for i, c := range csharp {
		for _, plain := range []bool{true, false} {
			at := c.at
			l := newLog(t, tbl, logtail.Config{PlainKeys: plain, WriterID: "w1", Now: func() time.Time { return at }})
			e := &Attempt{N: int32(i)}
			pk := fmt.Sprintf("p%d-%v", i, plain)
			if err := l.Append(ctx, pk, e); err != nil {
				t.Fatal(err)
			}
			got, err := tbl.Get(ctx, pk, e.RowKey)
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if !plain {
				want = keys.InvertedTicksSeq(c.at, 0) + "_w1"
			}
			if got.RowKey != want {
				t.Errorf("%v, PlainKeys %v: RowKey %q, want %q", c.at, plain, got.RowKey, want)
			}
		}
	}

	// Three plain entries in one tick take three consecutive ticks.
	at := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	l := newLog(t, tbl, logtail.Config{PlainKeys: true, Now: func() time.Time { return at }})
	es := []*Attempt{{N: 1}, {N: 2}, {N: 3}}
	if err := l.Append(ctx, "same-tick", es...); err != nil {
		t.Fatal(err)
	}
	for i, e := range es {
		want := keys.InvertedTicks(at.Add(time.Duration(i) * 100))
		if e.RowKey != want {
			t.Errorf("plain entry %d: RowKey %q, want %q", i, e.RowKey, want)
		}
	}
	tail, err := l.Tail(ctx, "same-tick", 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := []int32{tail[0].N, tail[1].N, tail[2].N}; !slices.Equal(got, []int32{3, 2, 1}) {
		t.Errorf("Tail = %v, want 3 2 1", got)
	}
}

// A log shares its partition with entities of other kinds: entries written
// by a .NET program with the plain C# key interleave by time, and rows whose
// RowKeys do not start with a digit are never read or trimmed.
func TestSharedPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t)
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	l := newLog(t, tbl, logtail.Config{Now: stepClock(t0, time.Minute)})
	for i := range 3 {
		if err := l.Append(ctx, "p", &Attempt{N: int32(i)}); err != nil { // t0, t0+1m, t0+2m
			t.Fatal(err)
		}
	}
	others := []*Attempt{
		{PartitionKey: "p", RowKey: keys.InvertedTicks(t0.Add(90 * time.Second)), N: 15}, // a .NET writer, between 1 and 2
		{PartitionKey: "p", RowKey: "!header", N: -1},
		{PartitionKey: "p", RowKey: "summary", N: -2},
	}
	for _, o := range others {
		if err := tbl.Insert(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	tail, err := l.Tail(ctx, "p", 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []int32
	for _, e := range tail {
		got = append(got, e.N)
	}
	if want := []int32{2, 15, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("Tail = %v, want %v", got, want)
	}
	n, err := l.Trim(ctx, "p", t0.Add(time.Hour))
	if err != nil || n != 4 {
		t.Fatalf("Trim = %d, %v; want 4 entries removed", n, err)
	}
	for _, rk := range []string{"!header", "summary"} {
		if _, err := tbl.Get(ctx, "p", rk); err != nil {
			t.Errorf("Trim touched %q: %v", rk, err)
		}
	}
}

// Trim removes exactly the entries before its instant, oldest first, over
// several pages and transactions, and leaves the rest.
func TestTrim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t)
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	l := newLog(t, tbl, logtail.Config{Now: stepClock(t0, time.Millisecond)})
	batch := make([]*Attempt, 1234) // entry i at t0 + i ms
	for i := range batch {
		batch[i] = &Attempt{N: int32(i)}
	}
	if err := l.Append(ctx, "p", batch...); err != nil {
		t.Fatal(err)
	}
	n, err := l.Trim(ctx, "p", t0.Add(1100*time.Millisecond))
	if err != nil || n != 1100 {
		t.Fatalf("Trim = %d, %v; want 1100", n, err)
	}
	var left []int32
	for e, err := range l.Since(ctx, "p", time.Time{}) {
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, e.N)
	}
	if len(left) != 134 || left[0] != 1233 || left[133] != 1100 {
		t.Fatalf("after Trim the log holds %d entries, %v … %v; want 1233 … 1100", len(left), left[:1], left[len(left)-1:])
	}
	// Trimming again finds nothing.
	if n, err := l.Trim(ctx, "p", t0.Add(1100*time.Millisecond)); err != nil || n != 0 {
		t.Fatalf("second Trim = %d, %v; want 0", n, err)
	}
}

// On a backend that does not sort (Config.Unsorted, the Cosmos DB Table
// API), Tail, Since and Between sort on the client and give the sorted
// answers; Page is refused.
func TestUnsorted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t)
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	sorted := newLog(t, tbl, logtail.Config{Now: stepClock(t0, time.Second)})
	batch := make([]*Attempt, 40)
	for i := range batch {
		batch[i] = &Attempt{N: int32(i)}
	}
	if err := sorted.Append(ctx, "p", batch...); err != nil {
		t.Fatal(err)
	}
	unsorted := newLog(t, tbl, logtail.Config{Unsorted: true})
	for _, n := range []int{1, 7, 40, 100} {
		a, err1 := sorted.Tail(ctx, "p", n)
		b, err2 := unsorted.Tail(ctx, "p", n)
		if err1 != nil || err2 != nil || !slices.Equal(rowKeys(a), rowKeys(b)) || len(a) != min(n, 40) {
			t.Errorf("Tail(%d): sorted %d entries (%v), unsorted %d (%v), differ or wrong length", n, len(a), err1, len(b), err2)
		}
	}
	collect := func(seq func(func(Attempt, error) bool)) []string {
		var out []string
		for e, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, e.RowKey)
		}
		return out
	}
	from, to := t0.Add(3*time.Second), t0.Add(30*time.Second)
	if a, b := collect(sorted.Between(ctx, "p", from, to)), collect(unsorted.Between(ctx, "p", from, to)); !slices.Equal(a, b) || len(a) != 27 {
		t.Errorf("Between: sorted %d, unsorted %d entries, differ or not 27", len(a), len(b))
	}
	if _, err := unsorted.Page(ctx, "p", 10, ""); !errors.Is(err, logtail.ErrUnsorted) {
		t.Errorf("Page on an unsorted log = %v, want ErrUnsorted", err)
	}
}

// Bad input is refused with an *ArgError before any request: the table
// here points at a closed port, so a request would fail differently.
func TestInvalidInputSendsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, err := entity.NewTableFromConnectionString[Attempt](
		"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+
			"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"+
			"TableEndpoint=http://127.0.0.1:1/devstoreaccount1/", "nowhere", nil)
	if err != nil {
		t.Fatal(err)
	}
	l := newLog(t, tbl, logtail.Config{})
	_, badCfg := logtail.New(tbl, logtail.Config{WriterID: "a_b"})
	_, nilTable := logtail.New[Attempt](nil, logtail.Config{})
	_, badSince := first(l.Since(ctx, "a/b", time.Now()))
	_, trimErr := l.Trim(ctx, "a#b", time.Now())
	_, tailErr := l.Tail(ctx, "p", 0)
	_, tailPK := l.Tail(ctx, "p?", 10)
	_, pageErr := l.Page(ctx, "p", 1001, "")
	at := func(t time.Time) logtail.Config { return logtail.Config{Now: func() time.Time { return t }} }
	year10000 := newLog(t, tbl, at(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)))
	year0 := newLog(t, tbl, at(time.Date(0, 12, 31, 23, 59, 59, 0, time.UTC)))
	plain10000 := newLog(t, tbl, logtail.Config{PlainKeys: true, Now: at(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)).Now})
	cases := map[string]error{
		"writer id with '_'": badCfg,
		"nil table":          nilTable,
		"nil entry":          l.Append(ctx, "p", &Attempt{}, nil),
		"invalid partition":  l.Append(ctx, "a\\b", &Attempt{}),
		"invalid entity":     l.Append(ctx, "p", &Attempt{User: string([]byte{0xff})}),
		"Since partition":    badSince,
		"Trim partition":     trimErr,
		"Tail n = 0":         tailErr,
		"Tail partition":     tailPK,
		"Page size 1001":     pageErr,
		"Clock year 10000":   year10000.Append(ctx, "p", &Attempt{}),
		"Clock year 0":       year0.Append(ctx, "p", &Attempt{}),
		"Clock year 0, many": year0.Append(ctx, "p", &Attempt{}, &Attempt{}),
		"plain, year 10000":  plain10000.Append(ctx, "p", &Attempt{}),
	}
	for name, err := range cases {
		var ae *logtail.ArgError
		var ce *logtail.ConfigError // New's arguments
		if !errors.As(err, &ae) && !errors.As(err, &ce) || !errors.Is(err, logtail.ErrInvalid) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s: %v; want an *ArgError or *ConfigError matching ErrInvalid", name, err)
		}
	}
}

func first[T any](seq func(func(T, error) bool)) (T, error) {
	var zero T
	for v, err := range seq {
		return v, err
	}
	return zero, nil
}

// Tail(n) is one request for n up to 1,000, the guide's $top query; a page
// is one request.
func TestTailIsOneRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	tbl, err := entity.NewTable[Attempt](env.With(meter.Policy()).Table(t))
	if err != nil {
		t.Fatal(err)
	}
	l := newLog(t, tbl, logtail.Config{})
	batch := make([]*Attempt, 1200)
	for i := range batch {
		batch[i] = &Attempt{N: int32(i)}
	}
	if err := l.Append(ctx, "p", batch...); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ n, requests int }{{1, 1}, {100, 1}, {1000, 1}, {1100, 2}} {
		before := meter.Snapshot()
		tail, err := l.Tail(ctx, "p", c.n)
		used := meter.Snapshot().Sub(before)
		if err != nil || len(tail) != c.n || tail[0].N != 1199 {
			t.Fatalf("Tail(%d): %d entries, %v", c.n, len(tail), err)
		}
		if used.Total() != int64(c.requests) || used.Count(cost.Table, cost.OpQuery) != int64(c.requests) {
			t.Errorf("Tail(%d) took %v, want %d queries", c.n, used, c.requests)
		}
	}
	before := meter.Snapshot()
	if p, err := l.Page(ctx, "p", 50, ""); err != nil || len(p.Items) != 50 || p.Next == "" {
		t.Fatalf("Page: %d entries, next %q, %v", len(p.Items), p.Next, err)
	}
	if used := meter.Snapshot().Sub(before); used.Total() != 1 {
		t.Errorf("a page took %v, want one query", used)
	}
}

// Two Trims of the same range at once both finish without an error, each
// stepping over the entries the other deleted, and leave exactly the newer
// entries.
func TestConcurrentTrims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t)
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	l := newLog(t, tbl, logtail.Config{Now: stepClock(t0, time.Millisecond)})
	batch := make([]*Attempt, 1500)
	for i := range batch {
		batch[i] = &Attempt{N: int32(i)}
	}
	if err := l.Append(ctx, "p", batch...); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	counts := make([]int, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i], errs[i] = newLog(t, tbl, logtail.Config{}).Trim(ctx, "p", t0.Add(1200*time.Millisecond))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if counts[0]+counts[1] < 1200 || counts[0] > 1200 || counts[1] > 1200 {
		t.Errorf("Trims counted %v, want each at most 1200 and together at least 1200", counts)
	}
	left, err := l.Tail(ctx, "p", 1000)
	if err != nil || len(left) != 300 || left[299].N != 1200 {
		t.Fatalf("after the Trims: %d entries (%v), want 1499 … 1200", len(left), err)
	}
}
