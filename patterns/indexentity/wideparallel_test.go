package indexentity_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// readProbe is a pipeline policy over the table reads of a lookup: it
// counts the reads in flight (and the most at once), holds each for
// hold so that reads allowed to overlap do, answers 503 for the range
// queries whose $filter names a failing partition, and records the
// partitions the range queries asked for.
type readProbe struct {
	hold time.Duration
	fail func(pk string) bool
	// onQuery, when set, runs at the start of each range query.
	onQuery func(pk string)
	// block, when set, holds a point read until its context ends or
	// release is closed.
	block   func(pk, rk string) bool
	release chan struct{}
	// waits, when set, holds a point read until a blocked read is held
	// (held is closed then), so that a lookup stopped after it has reads
	// under way to cancel.
	waits    func(pk, rk string) bool
	held     chan struct{}
	heldOnce sync.Once

	mu        sync.Mutex
	inFlight  int
	most      int
	queried   []string // PartitionKeys of the range queries, in order of arrival
	cancelled int      // blocked point reads that saw their context end
}

// filterPK returns the PartitionKey a range query's filter names.
func filterPK(f string) string {
	_, rest, ok := strings.Cut(f, "PartitionKey eq '")
	if !ok {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(rest); i++ {
		if rest[i] == '\'' {
			if i+1 < len(rest) && rest[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			break
		}
		b.WriteByte(rest[i])
	}
	return b.String()
}

func (p *readProbe) Do(req *policy.Request) (*http.Response, error) {
	r := req.Raw()
	if r.Method != http.MethodGet {
		return req.Next()
	}
	f := r.URL.Query().Get("$filter")
	pk := filterPK(f)
	p.mu.Lock()
	p.inFlight++
	p.most = max(p.most, p.inFlight)
	if f != "" {
		p.queried = append(p.queried, pk)
	}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.inFlight--
		p.mu.Unlock()
	}()
	if f != "" && p.onQuery != nil {
		p.onQuery(pk)
	}
	if p.hold > 0 {
		select {
		case <-time.After(p.hold):
		case <-r.Context().Done():
		}
	}
	if f == "" && p.waits != nil {
		if ppk, prk, ok := pointKeys(r.URL.EscapedPath()); ok && p.waits(ppk, prk) {
			select {
			case <-p.held:
			case <-r.Context().Done():
			}
		}
	}
	if f == "" && p.block != nil {
		if ppk, prk, ok := pointKeys(r.URL.EscapedPath()); ok && p.block(ppk, prk) {
			if p.held != nil {
				p.heldOnce.Do(func() { close(p.held) })
			}
			select {
			case <-r.Context().Done():
				p.mu.Lock()
				p.cancelled++
				p.mu.Unlock()
				return nil, r.Context().Err()
			case <-p.release:
			}
		}
	}
	if f != "" && p.fail != nil && p.fail(pk) {
		return &http.Response{
			StatusCode: http.StatusServiceUnavailable,
			Status:     "503 Server Busy",
			Header:     http.Header{"Content-Type": {"application/json"}, "X-Ms-Error-Code": {"ServerBusy"}},
			Body:       io.NopCloser(strings.NewReader(`{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"injected"}}}`)),
			Request:    r,
		}, nil
	}
	return req.Next()
}

// pointKeys reads the keys of a point read's path
// ".../Table(PartitionKey='a',RowKey='b')".
func pointKeys(path string) (pk, rk string, ok bool) {
	i := strings.Index(path, "(PartitionKey=")
	if i < 0 {
		return "", "", false
	}
	rest := path[i+len("(PartitionKey="):]
	pkq, rkq, ok := strings.Cut(rest, ",RowKey=")
	if !ok {
		return "", "", false
	}
	rkq = strings.TrimSuffix(rkq, ")")
	unq := func(s string) string {
		if u, err := url.PathUnescape(s); err == nil {
			s = u
		}
		s = strings.TrimPrefix(strings.TrimSuffix(s, "'"), "'")
		return strings.ReplaceAll(s, "''", "'")
	}
	return unq(pkq), unq(rkq), true
}

func (p *readProbe) stats() (most, inFlight int, queried []string, cancelled int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.most, p.inFlight, slices.Clone(p.queried), p.cancelled
}

// probedSet is a Set over w's storage whose table reads go through
// probe, with the given Concurrency and one try per request (so that a
// failing bucket fails at once), on a processor of its own.
func (w *wideWorld) probedSet(t testing.TB, probe *readProbe, concurrency int) *indexentity.Set[Employee] {
	t.Helper()
	pe := env.With(probe).WithOptions(func(o *azcore.ClientOptions) {
		o.Retry.MaxRetries = 1
		o.Retry.RetryDelay = time.Millisecond
		o.Retry.MaxRetryDelay = time.Millisecond
	})
	p, err := eventual.New(patterntest.SameQueues(t, env, w.qs), nil, patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	s, err := indexentity.New(patterntest.View[Employee](t, pe, w.emps),
		indexentity.Config{Processor: p, Entries: patterntest.View[entity.DynamicEntity](t, pe, w.entries), Concurrency: concurrency},
		indexentity.Index[Employee]{Name: "city", Value: city, Placement: indexentity.TableWide, Buckets: w.buckets})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// seedWide inserts employees through a Set on the plain environment and
// drains the queue: n of Paris over 6 departments, and one of Oslo.
func seedWide(t testing.TB, w *wideWorld, emps []Employee) {
	t.Helper()
	ctx := context.Background()
	s, p := w.set(t, env, patterntest.Fast())
	for i := range emps {
		if err := s.Insert(ctx, &emps[i]); err != nil {
			t.Fatalf("insert %q/%q: %v", emps[i].PartitionKey, emps[i].RowKey, err)
		}
	}
	if err := patterntest.Drain(ctx, p, w.qs); err != nil {
		t.Fatal(err)
	}
}

func parisStaff(n int) []Employee {
	var emps []Employee
	for i := range n {
		emps = append(emps, Employee{PartitionKey: "D" + keys.Pad(int64(i%6), 2), RowKey: keys.Pad(int64(i), 6), City: "Paris"})
	}
	return append(emps, Employee{PartitionKey: "D00", RowKey: "999999", City: "Oslo"})
}

// lookupGoroutines counts the goroutines running a TableWide lookup's
// reads (the buckets' range queries and the point reads).
func lookupGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "patterns/indexentity.(*Set[...]).wideMembers") || strings.Contains(g, "patterns/indexentity.(*Set[...]).fetchKeys") {
			count++
		}
	}
	return count
}

// TestTableWideBucketFails fails the range query of one bucket of eight
// (503, on every try) and then of two: LookupValueAll and ValueMembers
// return a *StepError naming the index and the partition of the first
// failing bucket in bucket order, yield no entity, leave no read running
// or goroutine behind, and (one bucket read at a time) read no bucket
// after the failing one.
func TestTableWideBucketFails(t *testing.T) {
	ctx := context.Background()
	w := newWideWorld(t, 8)
	seedWide(t, w, parisStaff(24))
	bucketPK := func(b int) string { return "city_" + keys.Compound("Paris", keys.Pad(int64(b), 1)) }
	for _, tc := range []struct {
		name        string
		failing     []int
		concurrency int
	}{
		{"bucket 3, one at a time", []int{3}, 1},
		{"bucket 3, three at a time", []int{3}, 3},
		{"buckets 5 and 2, all at once", []int{5, 2}, 8},
		{"bucket 0, one at a time", []int{0}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fail := map[string]bool{}
			for _, b := range tc.failing {
				fail[bucketPK(b)] = true
			}
			first := bucketPK(slices.Min(tc.failing))
			probe := &readProbe{hold: 2 * time.Millisecond, fail: func(pk string) bool { return fail[pk] }}
			s := w.probedSet(t, probe, tc.concurrency)
			check := func(what string, err error) {
				t.Helper()
				var se *indexentity.StepError
				if !errors.As(err, &se) || se.Index != "city" || se.PartitionKey != first {
					t.Errorf("%s: %v; want a *StepError of index city naming partition %q", what, err, first)
				}
				var re *azcore.ResponseError
				if !errors.As(err, &re) || re.StatusCode != http.StatusServiceUnavailable {
					t.Errorf("%s: %v does not unwrap to the 503", what, err)
				}
				if n := lookupGoroutines(); n != 0 {
					t.Errorf("%s: %d lookup goroutines left", what, n)
				}
				if _, inFlight, _, _ := probe.stats(); inFlight != 0 {
					t.Errorf("%s: %d reads still in flight", what, inFlight)
				}
			}
			var got []Employee
			var errs []error
			for e, err := range s.LookupValueAll(ctx, "city", "Paris", indexentity.LookupOptions{}) {
				if err != nil {
					errs = append(errs, err)
					continue
				}
				got = append(got, e)
			}
			if len(got) != 0 || len(errs) != 1 {
				t.Fatalf("LookupValueAll yielded %d entities and errors %v; want one error alone", len(got), errs)
			}
			check("LookupValueAll", errs[0])
			_, _, queried, _ := probe.stats()
			if tc.concurrency == 1 {
				for _, pk := range queried {
					if pk > first {
						t.Errorf("bucket %q was read after bucket %q failed (reads: %q)", pk, first, queried)
						break
					}
				}
			}
			ms, err := s.ValueMembers(ctx, "city", "Paris")
			if ms != nil {
				t.Errorf("ValueMembers returned %d members beside its error", len(ms))
			}
			check("ValueMembers", err)
		})
	}
}

// TestTableWideConcurrency counts the table reads in flight (each held a
// little so that reads allowed to overlap do) of ValueMembers and
// LookupValueAll over 8 buckets and 20 members: never more than
// Config.Concurrency, for 1, 3 and 16 (more than the buckets), and more
// than one when it allows.
func TestTableWideConcurrency(t *testing.T) {
	ctx := context.Background()
	w := newWideWorld(t, 8)
	seedWide(t, w, parisStaff(20))
	for _, c := range []int{1, 3, 16} {
		for _, op := range []string{"ValueMembers", "LookupValueAll"} {
			probe := &readProbe{hold: 10 * time.Millisecond}
			s := w.probedSet(t, probe, c)
			n := 0
			if op == "ValueMembers" {
				ms, err := s.ValueMembers(ctx, "city", "Paris")
				if err != nil {
					t.Fatal(err)
				}
				n = len(ms)
			} else {
				for _, err := range s.LookupValueAll(ctx, "city", "Paris", indexentity.LookupOptions{}) {
					if err != nil {
						t.Fatal(err)
					}
					n++
				}
			}
			if n != 20 {
				t.Errorf("%s with Concurrency %d: %d members, want 20", op, c, n)
			}
			most, _, _, _ := probe.stats()
			if most > c {
				t.Errorf("%s with Concurrency %d: %d reads in flight at once", op, c, most)
			}
			if c > 1 && most < 2 {
				t.Errorf("%s with Concurrency %d: the reads never overlapped", op, c)
			}
		}
	}
}

// TestTableWideCancel cancels the context of a LookupValueAll while the
// buckets are read (one at a time), and stops a lookup after its first
// entity while the other point reads are under way (held until their
// context ends): the first returns an error matching context.Canceled and
// reads no bucket after the cancellation; the second cancels the reads
// under way; neither leaves a read running or a goroutine behind.
func TestTableWideCancel(t *testing.T) {
	w := newWideWorld(t, 8)
	seedWide(t, w, parisStaff(12))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	probe := &readProbe{}
	probe.onQuery = func(pk string) {
		if strings.HasSuffix(pk, " 2") {
			cancel()
		}
	}
	s := w.probedSet(t, probe, 1)
	var errs []error
	for _, err := range s.LookupValueAll(ctx, "city", "Paris", indexentity.LookupOptions{}) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("cancelled LookupValueAll yielded %v; want one error matching context.Canceled", errs)
	}
	_, inFlight, queried, _ := probe.stats()
	if len(queried) > 3 {
		t.Errorf("buckets read after the cancellation: %q", queried)
	}
	if n := lookupGoroutines(); n != 0 || inFlight != 0 {
		t.Errorf("after the cancellation: %d lookup goroutines, %d reads in flight", n, inFlight)
	}

	// Early stop: every point read but the first member's waits for its
	// context.
	ms, err := w.probedSet(t, &readProbe{}, 4).ValueMembers(context.Background(), "city", "Paris")
	if err != nil || len(ms) != 12 {
		t.Fatalf("ValueMembers: %v, %v", ms, err)
	}
	release := make(chan struct{})
	defer close(release)
	probe = &readProbe{release: release, held: make(chan struct{}),
		block: func(pk, rk string) bool { return drift.Key{PartitionKey: pk, RowKey: rk} != ms[0] },
		waits: func(pk, rk string) bool { return drift.Key{PartitionKey: pk, RowKey: rk} == ms[0] }}
	s = w.probedSet(t, probe, 4)
	var got []drift.Key
	for e, err := range s.LookupValueAll(context.Background(), "city", "Paris", indexentity.LookupOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, drift.Key{PartitionKey: e.PartitionKey, RowKey: e.RowKey})
		break
	}
	_, inFlight, _, cancelled := probe.stats()
	if len(got) != 1 || got[0] != ms[0] {
		t.Errorf("stopped lookup yielded %v; want %v", got, ms[0])
	}
	if inFlight != 0 || cancelled == 0 {
		t.Errorf("after the early stop: %d reads in flight, %d cancelled", inFlight, cancelled)
	}
	if n := lookupGoroutines(); n != 0 {
		t.Errorf("after the early stop: %d lookup goroutines", n)
	}
}

// TestTableWideLookupWhileMoving has 4 writers move 24 employees of 4
// departments between Paris and Oslo (8 buckets, 60 changes) while a
// worker keeps the lists and a reader looks Paris up, whole and in pages
// of 5: a lookup never yields an employee outside Paris nor one twice,
// pages go strictly forward in key order, and once the queue drained the
// lookup names exactly the employees the table (read raw) says are in
// Paris.
func TestTableWideLookupWhileMoving(t *testing.T) {
	ctx := context.Background()
	w := newWideWorld(t, 8)
	var emps []Employee
	for i := range 24 {
		c := "Paris"
		if i%2 == 1 {
			c = "Oslo"
		}
		emps = append(emps, Employee{PartitionKey: "D" + keys.Pad(int64(i%4), 2), RowKey: keys.Pad(int64(i), 6), City: c})
	}
	seedWide(t, w, emps)
	writers, p := w.set(t, env, patterntest.Fast())
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- p.Run(rctx) }()
	reader := w.probedSet(t, &readProbe{}, 3)
	done := make(chan struct{})
	var reads sync.WaitGroup
	lookups := 0
	reads.Add(1)
	go func() {
		defer reads.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			lookups++
			seen := map[drift.Key]bool{}
			for e, err := range reader.LookupValueAll(ctx, "city", "Paris", indexentity.LookupOptions{}) {
				if err != nil {
					t.Error(err)
					return
				}
				k := drift.Key{PartitionKey: e.PartitionKey, RowKey: e.RowKey}
				if e.City != "Paris" || seen[k] {
					t.Errorf("lookup of Paris yielded %v in %q (again: %v)", k, e.City, seen[k])
				}
				seen[k] = true
			}
			var last drift.Key
			has := false
			for range 10 {
				n := 0
				for e, err := range reader.LookupValueAll(ctx, "city", "Paris", indexentity.LookupOptions{Limit: 5, After: last, HasAfter: has}) {
					if err != nil {
						t.Error(err)
						return
					}
					k := drift.Key{PartitionKey: e.PartitionKey, RowKey: e.RowKey}
					if has && (keys.Compare(k.PartitionKey, last.PartitionKey) < 0 || k.PartitionKey == last.PartitionKey && keys.Compare(k.RowKey, last.RowKey) <= 0) {
						t.Errorf("page after %v yielded %v", last, k)
					}
					last, has = k, true
					n++
				}
				if n < 5 {
					break
				}
			}
		}
	}()
	patterntest.Parallel(t, 4, 60, func(i int) error {
		e := emps[(i*7)%len(emps)]
		_, err := writers.Modify(ctx, e.PartitionKey, e.RowKey, func(e *Employee) error {
			if e.City == "Paris" {
				e.City = "Oslo"
			} else {
				e.City = "Paris"
			}
			return nil
		}, entity.ModifyOptions{})
		return err
	})
	close(done)
	reads.Wait()
	if lookups < 2 {
		t.Errorf("%d lookups ran beside the writers", lookups)
	}
	stop()
	if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if err := patterntest.Drain(ctx, p, w.qs); err != nil {
		t.Fatal(err)
	}
	want := wideExpect(t, w.emps.Name())["Paris"]
	if got := wideLookup(t, reader, "Paris", indexentity.LookupOptions{}); !slices.Equal(got, want) {
		t.Errorf("after the drain: %q, want %q", got, want)
	}
}

// TestTableWideNegativeLimit: a negative LookupOptions.Limit is a
// *ConfigError matching ErrInvalidConfig, and nothing is read.
func TestTableWideNegativeLimit(t *testing.T) {
	w := newWideWorld(t, 8)
	probe := &readProbe{}
	s := w.probedSet(t, probe, 3)
	var errs []error
	for _, err := range s.LookupValueAll(context.Background(), "city", "Paris", indexentity.LookupOptions{Limit: -1}) {
		errs = append(errs, err)
	}
	var ce *indexentity.ConfigError
	if len(errs) != 1 || !errors.As(errs[0], &ce) || ce.Field != "LookupOptions.Limit" || !errors.Is(errs[0], indexentity.ErrInvalidConfig) {
		t.Errorf("Limit -1: %v; want one *ConfigError on LookupOptions.Limit", errs)
	}
	if most, _, _, _ := probe.stats(); most != 0 {
		t.Errorf("Limit -1 sent %d reads", most)
	}
}
