package secondaryindex_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
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
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// readProbe is a pipeline policy over the table reads of a lookup: it
// counts the reads in flight (and the most at once), holds each for
// hold so that reads allowed to overlap do, answers 503 for the range
// queries whose $filter names a failing partition, runs onQuery at the
// start of each range query, and records the partitions they asked for.
type readProbe struct {
	hold    time.Duration
	fail    func(pk string) bool
	onQuery func(pk string)
	// afterGet, when set, runs after each point read was answered.
	afterGet func(path string)

	mu       sync.Mutex
	inFlight int
	most     int
	queried  []string
}

// filterPK returns the PartitionKey a range query's filter names.
func filterPK(f string) string {
	_, rest, ok := strings.Cut(f, "PartitionKey eq '")
	if !ok {
		return ""
	}
	pk, _, _ := strings.Cut(rest, "'")
	return pk
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
	if f != "" && p.fail != nil && p.fail(pk) {
		return &http.Response{
			StatusCode: http.StatusServiceUnavailable,
			Status:     "503 Server Busy",
			Header:     http.Header{"Content-Type": {"application/json"}, "X-Ms-Error-Code": {"ServerBusy"}},
			Body:       io.NopCloser(strings.NewReader(`{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"injected"}}}`)),
			Request:    r,
		}, nil
	}
	resp, err := req.Next()
	if f == "" && p.afterGet != nil && err == nil {
		p.afterGet(r.URL.Path)
	}
	return resp, err
}

func (p *readProbe) stats() (most, inFlight int, queried []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.most, p.inFlight, slices.Clone(p.queried)
}

// prefixWorld is a table of employees whose last names are indexed
// table-wide over 8 buckets, the entries in a table of their own.
type prefixWorld struct {
	emps    *entity.Table[Employee]
	entries *entity.Table[entity.DynamicEntity]
	qs      []eventual.Queue
}

const prefixBuckets = 8

func newPrefixWorld(t testing.TB) *prefixWorld {
	t.Helper()
	return &prefixWorld{emps: employees(t, env), entries: patterntest.Table[entity.DynamicEntity](t, env), qs: patterntest.Queues(t, env, 1)}
}

// set is a Set over w through probe (nil: the plain environment), with
// the given Concurrency and one retry a millisecond later, on a processor
// of its own.
func (w *prefixWorld) set(t testing.TB, probe *readProbe, concurrency int) (*secondaryindex.Set[Employee], *eventual.Processor) {
	t.Helper()
	e := env
	if probe != nil {
		e = env.With(probe).WithOptions(func(o *azcore.ClientOptions) {
			o.Retry.MaxRetries = 1
			o.Retry.RetryDelay = time.Millisecond
			o.Retry.MaxRetryDelay = time.Millisecond
		})
	}
	p, err := eventual.New(patterntest.SameQueues(t, env, w.qs), nil, fast())
	if err != nil {
		t.Fatal(err)
	}
	name := nameIndex(secondaryindex.TableWide)
	name.Buckets = prefixBuckets
	cfg := withProcessor(remoteConfig(patterntest.View[entity.DynamicEntity](t, e, w.entries)), p)
	cfg.Concurrency = concurrency
	s, err := secondaryindex.New(patterntest.View[Employee](t, e, w.emps), cfg, name)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// seed inserts emps through a Set on the plain environment and drains
// the queue.
func (w *prefixWorld) seed(t testing.TB, emps []Employee) {
	t.Helper()
	s, p := w.set(t, nil, 0)
	for i := range emps {
		if err := s.Insert(context.Background(), &emps[i]); err != nil {
			t.Fatalf("insert %q/%q: %v", emps[i].PartitionKey, emps[i].RowKey, err)
		}
	}
	drainWide(t, p, w.qs)
}

// jonesFamily is n employees over 5 departments whose last names, all
// starting with "Jo", fall in every bucket, and one Smith.
func jonesFamily(n int) []Employee {
	var emps []Employee
	for i := range n {
		emps = append(emps, Employee{PartitionKey: "D" + keys.Pad(int64(i%5), 2), RowKey: empid(i), LastName: "Jo" + keys.Pad(int64(i), 3)})
	}
	return append(emps, Employee{PartitionKey: "D00", RowKey: empid(999), LastName: "Smith"})
}

// lookupGoroutines counts the goroutines running a lookup's reads.
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
		if strings.Contains(g, "patterns/secondaryindex.mergeByRowKey") || strings.Contains(g, "patterns/secondaryindex.(*Set[...]).scan") {
			count++
		}
	}
	return count
}

// TestTableWidePrefixBucketFails fails the range query of one bucket of
// eight (503, on every try), then of two: LookupValuePrefix yields one
// error and no entity, a *StepError naming the index and the partition of
// the first failing bucket in bucket order that unwraps to the 503; with
// one read at a time no bucket after the failing one is read; no read or
// goroutine is left behind. LookupValueAll of a value whose bucket fails
// yields one such error too.
func TestTableWidePrefixBucketFails(t *testing.T) {
	w := newPrefixWorld(t)
	w.seed(t, jonesFamily(24))
	for _, tc := range []struct {
		name        string
		failing     []string
		concurrency int
		verify      bool
	}{
		{"bucket 3, one at a time", []string{"3"}, 1, false},
		{"bucket 3, verified, three at a time", []string{"3"}, 3, true},
		{"buckets 5 and 2, all at once", []string{"5", "2"}, 8, false},
		{"bucket 0, one at a time, verified", []string{"0"}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fail := map[string]bool{}
			for _, b := range tc.failing {
				fail["name_"+b] = true
			}
			first := "name_" + slices.Min(tc.failing)
			probe := &readProbe{hold: 2 * time.Millisecond, fail: func(pk string) bool { return fail[pk] }}
			s, _ := w.set(t, probe, tc.concurrency)
			var got []Employee
			var errs []error
			for e, err := range s.LookupValuePrefix(context.Background(), "name", "Jo", secondaryindex.LookupOptions{Verify: tc.verify}) {
				if err != nil {
					errs = append(errs, err)
					continue
				}
				got = append(got, e)
			}
			if len(got) != 0 || len(errs) != 1 {
				t.Fatalf("yielded %d entities and errors %v; want one error alone", len(got), errs)
			}
			var se *secondaryindex.StepError
			if !errors.As(errs[0], &se) || se.Index != "name" || se.PartitionKey != first {
				t.Errorf("%v; want a *StepError of index name naming partition %q", errs[0], first)
			}
			var re *azcore.ResponseError
			if !errors.As(errs[0], &re) || re.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("%v does not unwrap to the 503", errs[0])
			}
			_, inFlight, queried := probe.stats()
			if n := lookupGoroutines(); n != 0 || inFlight != 0 {
				t.Errorf("%d lookup goroutines and %d reads left", n, inFlight)
			}
			if tc.concurrency == 1 {
				for _, pk := range queried {
					if pk > first {
						t.Errorf("bucket %q was read after bucket %q failed (reads: %q)", pk, first, queried)
						break
					}
				}
			}
			// LookupValueAll of a value of the failing bucket: one error
			// naming it.
			checked := false
			for _, e := range jonesFamily(24) {
				if "name_"+keys.Bucket(e.LastName, prefixBuckets) != first {
					continue
				}
				checked = true
				var errs []error
				for _, err := range s.LookupValueAll(context.Background(), "name", e.LastName, secondaryindex.LookupOptions{Verify: tc.verify}) {
					errs = append(errs, err)
				}
				if len(errs) != 1 || !errors.As(errs[0], &se) || se.Index != "name" || se.PartitionKey != first {
					t.Errorf("LookupValueAll %s yielded %v; want one *StepError naming partition %q", e.LastName, errs, first)
				}
				break
			}
			if !checked {
				t.Errorf("no value of bucket %q", first)
			}
		})
	}
}

// TestTableWidePrefixConcurrency counts the table reads in flight (each
// held a little so that reads allowed to overlap do) of a verified
// LookupValuePrefix over 8 buckets and 30 entries: never more than
// Config.Concurrency, for 1, 3 and 16 (more than the buckets), and more
// than one when it allows.
func TestTableWidePrefixConcurrency(t *testing.T) {
	w := newPrefixWorld(t)
	w.seed(t, jonesFamily(30))
	for _, c := range []int{1, 3, 16} {
		for _, verify := range []bool{false, true} {
			probe := &readProbe{hold: 10 * time.Millisecond}
			s, _ := w.set(t, probe, c)
			got := names(t, s.LookupValuePrefix(context.Background(), "name", "Jo", secondaryindex.LookupOptions{Verify: verify}))
			if len(got) != 30 {
				t.Errorf("Concurrency %d, Verify %v: %d entities, want 30", c, verify, len(got))
			}
			most, _, _ := probe.stats()
			if most > c {
				t.Errorf("Concurrency %d, Verify %v: %d reads in flight at once", c, verify, most)
			}
			if c > 1 && most < 2 {
				t.Errorf("Concurrency %d, Verify %v: the reads never overlapped", c, verify)
			}
		}
	}
}

// TestTableWidePrefixCancel cancels the context of a LookupValuePrefix
// while its buckets are read (one at a time), and stops one after its
// first entity: the first yields one error matching context.Canceled and
// reads no bucket after the cancellation; neither leaves a read running
// or a goroutine behind.
func TestTableWidePrefixCancel(t *testing.T) {
	w := newPrefixWorld(t)
	w.seed(t, jonesFamily(16))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	probe := &readProbe{onQuery: func(pk string) {
		if pk == "name_2" {
			cancel()
		}
	}}
	s, _ := w.set(t, probe, 1)
	var errs []error
	n := 0
	for _, err := range s.LookupValuePrefix(ctx, "name", "Jo", secondaryindex.LookupOptions{}) {
		if err != nil {
			errs = append(errs, err)
		} else {
			n++
		}
	}
	if n != 0 || len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("cancelled lookup yielded %d entities and %v; want one error matching context.Canceled", n, errs)
	}
	_, inFlight, queried := probe.stats()
	if len(queried) > 3 {
		t.Errorf("buckets read after the cancellation: %q", queried)
	}
	if g := lookupGoroutines(); g != 0 || inFlight != 0 {
		t.Errorf("after the cancellation: %d lookup goroutines, %d reads in flight", g, inFlight)
	}

	for _, verify := range []bool{false, true} {
		probe = &readProbe{hold: time.Millisecond}
		s, _ = w.set(t, probe, 4)
		n = 0
		for _, err := range s.LookupValuePrefix(context.Background(), "name", "Jo", secondaryindex.LookupOptions{Verify: verify}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			break
		}
		_, inFlight, _ = probe.stats()
		if g := lookupGoroutines(); n != 1 || g != 0 || inFlight != 0 {
			t.Errorf("stopped after the first (Verify %v): %d entities, %d lookup goroutines, %d reads in flight", verify, n, g, inFlight)
		}
	}
}

// awkward are keys chosen to sort apart: empty, a space and '!' (the
// compound separator and escape), a quote, characters beyond the BMP and
// characters of U+E000–U+FFFF (which Go's string order puts after the
// former and the service before).
var awkward = []string{"", " ", "!", "'", "O'Brien", "a b", "a!b", "a", "\U0001F600", "\uFF5E", "\uE000x", "\U00010000", "z"}

// TestTableWidePrefixAwkwardKeys indexes last names "J"+awkward of
// employees with awkward PartitionKeys and RowKeys (after "empid_"), and
// copies one entry, by hand, into a bucket that is not its value's (as a
// change of Index.Buckets leaves it): LookupValuePrefix of "J" yields
// every employee in the order of the values, then PartitionKey, then
// RowKey, by keys.Compare (the service's order), and LookupValueAll of
// each value its primaries in key order; verified, the copy in the wrong
// bucket is not yielded a second time.
func TestTableWidePrefixAwkwardKeys(t *testing.T) {
	ctx := context.Background()
	w := newPrefixWorld(t)
	var emps []Employee
	for i, pk := range awkward {
		for j, rk := range awkward {
			if (i+j)%4 == 0 {
				emps = append(emps, Employee{PartitionKey: pk, RowKey: "empid_" + rk, LastName: "J" + awkward[(i+2*j)%len(awkward)]})
			}
		}
	}
	w.seed(t, emps)
	slices.SortFunc(emps, func(a, b Employee) int {
		for _, c := range [][2]string{{a.LastName, b.LastName}, {a.PartitionKey, b.PartitionKey}, {a.RowKey, b.RowKey}} {
			if n := keys.Compare(c[0], c[1]); n != 0 {
				return n
			}
		}
		return 0
	})
	var want []string
	for _, e := range emps {
		want = append(want, e.PartitionKey+"/"+e.RowKey+" "+e.LastName)
	}
	// The entry of emps[3], copied into the next bucket.
	d := emps[3]
	erk := "name_" + keys.Compound(d.LastName, d.PartitionKey, d.RowKey)
	epk := "name_" + keys.Bucket(d.LastName, prefixBuckets)
	raw := rawTable(t, w.entries.Name())
	got, err := raw.GetEntity(ctx, epk, erk, nil)
	if err != nil {
		t.Fatal(err)
	}
	var row map[string]any
	if err := json.Unmarshal(got.Value, &row); err != nil {
		t.Fatal(err)
	}
	other := keys.Pad(int64((int(epk[len(epk)-1]-'0')+1)%prefixBuckets), 1)
	row["PartitionKey"] = "name_" + other
	for k := range row {
		if strings.HasPrefix(k, "odata.") || k == "Timestamp" || strings.HasSuffix(k, "@odata.type") && strings.HasPrefix(k, "Timestamp") {
			delete(row, k)
		}
	}
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.UpsertEntity(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	s, _ := w.set(t, &readProbe{}, 3)
	if got := names(t, s.LookupValuePrefix(ctx, "name", "J", secondaryindex.LookupOptions{Verify: true})); !slices.Equal(got, want) {
		t.Errorf("verified:\n got %q\nwant %q", got, want)
	}
	// LookupValueAll of each value: one bucket, its primaries in key order.
	byValue := map[string][]string{}
	for i, e := range emps {
		byValue[e.LastName] = append(byValue[e.LastName], want[i])
	}
	for v, w := range byValue {
		if got := names(t, s.LookupValueAll(ctx, "name", v, secondaryindex.LookupOptions{Verify: true})); !slices.Equal(got, w) {
			t.Errorf("LookupValueAll %q:\n got %q\nwant %q", v, got, w)
		}
	}
	// Without Verify the entries are what is read, the stray copy too,
	// in order.
	if got := names(t, s.LookupValuePrefix(ctx, "name", "J", secondaryindex.LookupOptions{})); len(got) != len(want)+1 || !slices.Equal(slices.Compact(got), want) {
		t.Errorf("entries:\n got %q\nwant %q and the copy of %s", got, want, want[3])
	}
}

// TestTableWidePrefixValueChangeDuringLookup: employee D00/empid_000001
// holds Jo1, and an entry of Jo2 for it sits in Jo2's bucket (a change of
// value whose old entry the worker has not removed yet). A verified
// LookupValuePrefix of "Jo" reads both entries; right after it read the
// employee to verify Jo1's entry (and found Jo1), the employee changes to
// Jo2 through the Set. The lookup yields the employee once.
func TestTableWidePrefixValueChangeDuringLookup(t *testing.T) {
	ctx := context.Background()
	w := newPrefixWorld(t)
	x := Employee{PartitionKey: "D00", RowKey: empid(1), LastName: "Jo1"}
	w.seed(t, []Employee{x, {PartitionKey: "D01", RowKey: empid(2), LastName: "Jo0"}})
	raw := rawTable(t, w.entries.Name())
	got, err := raw.GetEntity(ctx, "name_"+keys.Bucket("Jo1", prefixBuckets), "name_"+keys.Compound("Jo1", x.PartitionKey, x.RowKey), nil)
	if err != nil {
		t.Fatal(err)
	}
	var row map[string]any
	if err := json.Unmarshal(got.Value, &row); err != nil {
		t.Fatal(err)
	}
	clean := map[string]any{"PartitionKey": "name_" + keys.Bucket("Jo2", prefixBuckets), "RowKey": "name_" + keys.Compound("Jo2", x.PartitionKey, x.RowKey), "LastName": "Jo2"}
	for k, v := range row {
		if _, set := clean[k]; !set && !strings.HasPrefix(k, "odata.") && !strings.HasPrefix(k, "Timestamp") {
			clean[k] = v
		}
	}
	b, err := json.Marshal(clean)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.AddEntity(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	plain, _ := w.set(t, nil, 0)
	var once sync.Once
	probe := &readProbe{afterGet: func(path string) {
		if strings.Contains(path, "empid_000001") {
			once.Do(func() {
				if _, err := plain.Modify(ctx, x.PartitionKey, x.RowKey, func(e *Employee) error { e.LastName = "Jo2"; return nil }, entity.ModifyOptions{}); err != nil {
					t.Error(err)
				}
			})
		}
	}}
	s, _ := w.set(t, probe, 1)
	n := 0
	for e, err := range s.LookupValuePrefix(ctx, "name", "Jo", secondaryindex.LookupOptions{Verify: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.PartitionKey == x.PartitionKey && e.RowKey == x.RowKey {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the employee whose value changed during the lookup was yielded %d times; want once", n)
	}
}

// TestTableWideNegativeLimit: a negative LookupOptions.Limit is a
// *ConfigError matching ErrInvalidConfig, verified or not, and nothing is
// read.
func TestTableWideNegativeLimit(t *testing.T) {
	w := newPrefixWorld(t)
	probe := &readProbe{}
	s, _ := w.set(t, probe, 3)
	for _, verify := range []bool{false, true} {
		opts := secondaryindex.LookupOptions{Limit: -1, Verify: verify}
		for name, seq := range map[string]func(func(Employee, error) bool){
			"LookupValuePrefix": s.LookupValuePrefix(context.Background(), "name", "Jo", opts),
			"LookupValueAll":    s.LookupValueAll(context.Background(), "name", "Jones", opts),
		} {
			var errs []error
			for _, err := range seq {
				errs = append(errs, err)
			}
			var ce *secondaryindex.ConfigError
			if len(errs) != 1 || !errors.As(errs[0], &ce) || ce.Field != "LookupOptions.Limit" || !errors.Is(errs[0], secondaryindex.ErrInvalidConfig) {
				t.Errorf("%s with Limit -1 (Verify %v): %v; want one *ConfigError on LookupOptions.Limit", name, verify, errs)
			}
		}
	}
	if most, _, _ := probe.stats(); most != 0 {
		t.Errorf("Limit -1 sent %d reads", most)
	}
}
