package rotation_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/rotation"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// Attempt is a login attempt, the guide's example of data that expires by
// the day.
type Attempt struct {
	PartitionKey string // user
	RowKey       string // time of the attempt, oldest first, unique per user
	ETag         string
	At           time.Time
	Success      bool
}

func attemptTime(a *Attempt) time.Time { return a.At }

var base = time.Date(2031, 5, 6, 10, 0, 0, 0, time.UTC)

// uniqueName returns a rotation name no other test uses.
func uniqueName(t testing.TB) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "rot" + hex.EncodeToString(b[:])
}

// fixture is one rotation's name and catalog, from which any number of
// Rotation values (as in several processes) can be made.
type fixture struct {
	name    string
	catalog string
	env     *integration.Env
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{name: uniqueName(t), catalog: env.TableName(t), env: env}
	if _, err := env.TableService.CreateTable(context.Background(), f.catalog, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, n := range tablesOf(t, f.name) {
			_, _ = env.TableService.DeleteTable(ctx, n, nil)
		}
	})
	return f
}

// open returns a new Rotation of the fixture, through e (env, or a view of
// it with extra policies).
func (f *fixture) open(t *testing.T, e *integration.Env, cfg rotation.Config[Attempt]) *rotation.Rotation[Attempt] {
	t.Helper()
	cfg.Name = f.name
	if cfg.Period == 0 {
		cfg.Period = rotation.Hour
	}
	cfg.Time = attemptTime
	r, err := rotation.New(e.TableService, e.TableService.NewClient(f.catalog), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tablesOf lists the tables whose names start with prefix.
func tablesOf(t testing.TB, prefix string) []string {
	t.Helper()
	var out []string
	for p := env.TableService.NewListTablesPager(nil); p.More(); {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range page.Tables {
			if strings.HasPrefix(*tb.Name, prefix) {
				out = append(out, *tb.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// attempts makes n attempts per user for users users in the hour starting
// at start, spread over the hour.
func attempts(start time.Time, users, n int) []Attempt {
	var out []Attempt
	for u := range users {
		for i := range n {
			at := start.Add(time.Duration(i) * time.Hour / time.Duration(n)).Add(time.Duration(u) * time.Millisecond)
			out = append(out, Attempt{PartitionKey: fmt.Sprintf("user%02d", u), RowKey: keys.TicksKeySeq(at, uint32(i)), At: at, Success: i%3 == 0})
		}
	}
	return out
}

func write(t *testing.T, r *rotation.Rotation[Attempt], as []Attempt) {
	t.Helper()
	if _, err := r.BulkWrite(context.Background(), as, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
}

// keysOf lists "pk/rk" of attempts, in the order given.
func keysOf(as []Attempt) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.PartitionKey + "/" + a.RowKey
	}
	return out
}

// sorted returns the keys in the service's order.
func sorted(as []Attempt) []string {
	ks := keysOf(as)
	slices.SortFunc(ks, keys.Compare)
	return ks
}

func readAll(t *testing.T, r *rotation.Rotation[Attempt], from, to time.Time, q entity.Query) []Attempt {
	t.Helper()
	var out []Attempt
	for a, err := range r.Query(context.Background(), from, to, q) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

func hour(i int) time.Time { return base.Add(time.Duration(i) * time.Hour) }

// Write across 5 periods, expire 3: the other 2 are intact, the expired
// tables are gone, their names are never used again, and their periods
// refuse writes.
func TestExpireKeepsTheRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	meter := cost.NewMeter()
	r := f.open(t, env.With(meter.Policy()), rotation.Config[Attempt]{})
	var byHour [5][]Attempt
	for h := range 5 {
		byHour[h] = attempts(hour(h), 4, 25)
		write(t, r, byHour[h])
	}
	live, err := r.Periods(ctx, hour(0), hour(5))
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 5 {
		t.Fatalf("%d periods before expiry, want 5: %v", len(live), live)
	}
	// A table per period, plus the one created ahead.
	if got := tablesOf(t, f.name); len(got) != 6 {
		t.Fatalf("tables %v, want 6", got)
	}

	before := meter.Snapshot()
	expired, err := r.Expire(ctx, hour(3))
	if err != nil {
		t.Fatal(err)
	}
	used := meter.Snapshot().Sub(before)
	if n := used.Count(cost.Table, cost.OpDeleteTable); n != 3 {
		t.Errorf("Expire deleted %d tables, want 3 (%v)", n, used)
	}
	if len(expired) != 3 || !expired[0].Start.Equal(hour(0)) || !expired[2].Start.Equal(hour(2)) {
		t.Fatalf("expired %v, want hours 0 to 2", expired)
	}

	// The other two periods are intact.
	got := readAll(t, r, hour(0), hour(5), entity.Query{})
	want := sorted(append(slices.Clone(byHour[3]), byHour[4]...))
	if !slices.Equal(keysOf(got), want) {
		t.Fatalf("after expiry Query returned %d entities, want the %d of hours 3 and 4", len(got), len(want))
	}
	// Another process sees the same.
	other := f.open(t, env, rotation.Config[Attempt]{})
	if got := readAll(t, other, hour(0), hour(5), entity.Query{}); !slices.Equal(keysOf(got), want) {
		t.Fatalf("a second Rotation read %d entities, want %d", len(got), len(want))
	}

	// The expired tables are gone.
	names := map[string]bool{}
	for _, p := range expired {
		names[p.Table] = true
	}
	for _, n := range tablesOf(t, f.name) {
		if names[n] {
			t.Errorf("expired table %s still exists", n)
		}
	}

	// Expired periods refuse writes, from this process and another, and no
	// table is made for them.
	for _, rr := range []*rotation.Rotation[Attempt]{r, other} {
		late := attempts(hour(1), 1, 1)[0]
		if err := rr.Insert(ctx, &late); !errors.Is(err, rotation.ErrExpired) {
			t.Fatalf("write to an expired period: %v, want ErrExpired", err)
		}
	}
	label := hour(1).Format("2006010215")
	for _, n := range tablesOf(t, f.name) {
		if strings.HasPrefix(n, f.name+label) {
			t.Errorf("table %s made for an expired period", n)
		}
	}

	// New periods get new names; an expired name is never reused.
	for h := 5; h < 8; h++ {
		write(t, other, attempts(hour(h), 2, 5))
	}
	for _, n := range tablesOf(t, f.name) {
		if names[n] {
			t.Errorf("expired table name %s used again", n)
		}
	}

	// Expire is idempotent.
	again, err := r.Expire(ctx, hour(3))
	if err != nil || len(again) != 0 {
		t.Fatalf("second Expire: %v, %v; want nothing to do", again, err)
	}
}

// A reader running while periods expire gets no error, and every entity of
// the periods that stay.
func TestReaderDuringExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	w := f.open(t, env, rotation.Config[Attempt]{})
	var all []Attempt
	for h := range 5 {
		as := attempts(hour(h), 2, 150)
		write(t, w, as)
		all = append(all, as...)
	}
	kept := map[string]bool{}
	for _, a := range all {
		if !a.At.Before(hour(3)) {
			kept[a.PartitionKey+"/"+a.RowKey] = true
		}
	}

	check := func(r *rotation.Rotation[Attempt], got []string) {
		t.Helper()
		seen := map[string]bool{}
		for _, k := range got {
			if seen[k] {
				t.Errorf("entity %s returned twice", k)
			}
			seen[k] = true
		}
		for k := range kept {
			if !seen[k] {
				t.Errorf("entity %s of a kept period missing", k)
				return
			}
		}
		if !slices.IsSortedFunc(got, keys.Compare) {
			t.Error("results not in key order")
		}
	}

	// Deterministic: a query that has read its first entity (the catalog
	// read, every table's first pages) when the expiry runs, and continues
	// over tables being deleted.
	r := f.open(t, env, rotation.Config[Attempt]{})
	var got []string
	expired := false
	for a, err := range r.Query(ctx, hour(0), hour(5), entity.Query{PageSize: 10}) {
		if err != nil {
			t.Fatalf("query during expiry: %v", err)
		}
		got = append(got, a.PartitionKey+"/"+a.RowKey)
		if !expired {
			if _, err := w.Expire(ctx, hour(3)); err != nil {
				t.Fatal(err)
			}
			expired = true
		}
	}
	check(r, got)
	if len(got) >= len(all) {
		t.Errorf("query read all %d entities, although 3 periods expired while it ran", len(got))
	}

	// Concurrent: readers loop while the rest expires.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	rounds := 0
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.open(t, env, rotation.Config[Attempt]{})
			for {
				select {
				case <-stop:
					return
				default:
				}
				var got []string
				for a, err := range r.Query(ctx, hour(3), hour(5), entity.Query{PageSize: 50}) {
					if err != nil {
						t.Errorf("query during expiry: %v", err)
						return
					}
					got = append(got, a.PartitionKey+"/"+a.RowKey)
				}
				check(r, got)
				mu.Lock()
				rounds++
				mu.Unlock()
			}
		}()
	}
	for h := 0; h < 3; h++ {
		if _, err := w.Expire(ctx, hour(3)); err != nil {
			t.Error(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	if rounds == 0 {
		t.Error("no reader finished a round")
	}
}

// Writers in several processes that open the same new period at once make
// one table for it, and every entity lands in it.
func TestConcurrentWritersShareOneTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	all := attempts(hour(0), 8, 20)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.open(t, env, rotation.Config[Attempt]{})
			for i := range all {
				if all[i].PartitionKey == fmt.Sprintf("user%02d", w) {
					a := all[i]
					if err := r.Insert(ctx, &a); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	r := f.open(t, env, rotation.Config[Attempt]{})
	ps, err := r.Periods(ctx, hour(0), hour(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("periods %v, want the hour written and the one ahead", ps)
	}
	if got := tablesOf(t, f.name); !slices.Equal(got, []string{ps[0].Table, ps[1].Table}) {
		t.Fatalf("tables %v, want exactly the catalog's %s and %s", got, ps[0].Table, ps[1].Table)
	}
	if got := readAll(t, r, hour(0), hour(1), entity.Query{}); !slices.Equal(keysOf(got), sorted(all)) {
		t.Fatalf("read %d entities, want %d", len(got), len(all))
	}
}

// match selects requests by method and a substring of the path.
func match(method, path string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == method && strings.Contains(r.URL.Path, path)
	}
}

// Lost replies to every kind of step — the claim transaction, table
// creation, the expiry mark, table deletion, the catalog clean-up — leave
// exactly one table per live period and none of the expired ones.
func TestLostReplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	// One injector per kind of step: each loses the next reply it is told to.
	batch, createTable, mark, deleteTable := faults.New(faults.Config{}), faults.New(faults.Config{}), faults.New(faults.Config{}), faults.New(faults.Config{})
	r := f.open(t, env.With(batch, createTable, mark, deleteTable), rotation.Config[Attempt]{})
	isBatch := match(http.MethodPost, "$batch")
	isCreate := func(req *http.Request) bool {
		return req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/Tables")
	}
	var all []Attempt
	for h := range 4 {
		batch.LoseNext(1, isBatch)        // the claim (hour 0 claims two periods, each later hour the one after it)
		createTable.LoseNext(1, isCreate) // the period's table
		as := attempts(hour(h), 2, 10)
		for i := range as {
			if err := r.Upsert(ctx, &as[i], entity.Replace); err != nil {
				t.Fatalf("hour %d: %v", h, err)
			}
		}
		all = append(all, as...)
	}
	// The mark (a merge of the meta entry), a table deletion, the catalog
	// clean-up transaction.
	mark.LoseNext(1, func(req *http.Request) bool {
		return (req.Method == http.MethodPatch || req.Method == "MERGE") && strings.Contains(req.URL.Path, f.catalog)
	})
	deleteTable.LoseNext(1, match(http.MethodDelete, "Tables('"))
	batch.LoseNext(1, isBatch)
	expired, err := r.Expire(ctx, hour(2))
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, inj := range []*faults.Injector{batch, createTable, mark, deleteTable} {
		lost += int(inj.Stats().LostReplies)
	}
	if lost != 4+4+1+1+1 {
		t.Fatalf("%d replies lost, want 11", lost)
	}
	if len(expired) != 2 {
		t.Fatalf("expired %v, want 2 periods", expired)
	}
	clean := f.open(t, env, rotation.Config[Attempt]{})
	ps, err := clean.Periods(ctx, hour(0), hour(10))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range ps {
		want = append(want, p.Table)
	}
	slices.Sort(want)
	if got := tablesOf(t, f.name); !slices.Equal(got, want) {
		t.Fatalf("tables %v, want the catalog's %v (nothing orphaned, nothing doubled)", got, want)
	}
	if len(ps) != 3 { // hours 2 and 3, and hour 4 claimed ahead
		t.Fatalf("periods %v, want 3", ps)
	}
	got := readAll(t, clean, hour(0), hour(10), entity.Query{})
	if !slices.Equal(keysOf(got), sorted(all[2*20:])) {
		t.Fatalf("read %d entities, want the %d of hours 2 and 3", len(got), len(all[2*20:]))
	}
}

// An Expire that stops after moving its mark (its table deletions fail)
// leaves tables that readers and writers no longer use; the next Expire, of
// any time, deletes them.
func TestCrashAfterMark(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.open(t, env, rotation.Config[Attempt]{})
	var all []Attempt
	for h := range 4 {
		as := attempts(hour(h), 2, 10)
		write(t, r, as)
		all = append(all, as...)
	}
	opts := env.NoRetryClientOptions()
	inj := faults.New(faults.Config{FailBefore: 1, Match: match(http.MethodDelete, "Tables('")})
	opts.PerRetryPolicies = append(opts.PerRetryPolicies, inj)
	svc, err := env.NewTableService(opts)
	if err != nil {
		t.Fatal(err)
	}
	crashing, err := rotation.New(svc, svc.NewClient(f.catalog), rotation.Config[Attempt]{Name: f.name, Period: rotation.Hour, Time: attemptTime})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crashing.Expire(ctx, hour(3)); err == nil {
		t.Fatal("Expire succeeded although every table deletion failed")
	}
	// Each hour written claimed the next one with it.
	if n := len(tablesOf(t, f.name)); n != 5 {
		t.Fatalf("%d tables after the failed Expire, want all 5 still there", n)
	}
	// Readers do not see the expired periods, writers cannot write to them.
	other := f.open(t, env, rotation.Config[Attempt]{})
	if got := readAll(t, other, hour(0), hour(5), entity.Query{}); !slices.Equal(keysOf(got), sorted(all[3*20:])) {
		t.Fatalf("read %d entities, want only the %d of hour 3", len(got), len(all[3*20:]))
	}
	late := attempts(hour(0), 1, 1)[0]
	if err := other.Insert(ctx, &late); !errors.Is(err, rotation.ErrExpired) {
		t.Fatalf("write to a marked period: %v, want ErrExpired", err)
	}
	// Any later Expire finishes the work.
	done, err := other.Expire(ctx, hour(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 3 {
		t.Fatalf("recovery expired %v, want the 3 left over", done)
	}
	if n := len(tablesOf(t, f.name)); n != 2 {
		t.Fatalf("%d tables after recovery, want 2 (hour 3, and hour 4 ahead)", n)
	}
}

// hook runs fn once, before the first request that matches is sent.
type hook struct {
	once  sync.Once
	match func(*http.Request) bool
	fn    func()
}

func (h *hook) Do(req *policy.Request) (*http.Response, error) {
	if h.match(req.Raw()) {
		h.once.Do(h.fn)
	}
	return req.Next()
}

// A writer that claimed a period before Expire moved the mark, and creates
// its table after Expire deleted it, deletes the table itself and reports
// ErrExpired: no table of an expired period survives.
func TestWriterCreatesAfterExpire(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	expirer := f.open(t, env, rotation.Config[Attempt]{Ahead: -1})
	h := &hook{
		match: func(req *http.Request) bool {
			return req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/Tables")
		},
		fn: func() {
			if _, err := expirer.Expire(ctx, hour(1)); err != nil {
				t.Error(err)
			}
		},
	}
	writer := f.open(t, env.With(h), rotation.Config[Attempt]{Ahead: -1})
	a := attempts(hour(0), 1, 1)[0]
	if err := writer.Insert(ctx, &a); !errors.Is(err, rotation.ErrExpired) {
		t.Fatalf("insert racing Expire: %v, want ErrExpired", err)
	}
	if got := tablesOf(t, f.name); len(got) != 0 {
		t.Fatalf("tables %v left for an expired period", got)
	}
}

// A writer that claimed a period and stopped before creating its table
// leaves a catalog entry without a table: readers see an empty period, and
// the next writer creates the table.
func TestClaimWithoutTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	opts := env.NoRetryClientOptions()
	opts.PerRetryPolicies = append(opts.PerRetryPolicies, faults.New(faults.Config{FailBefore: 1, Match: func(req *http.Request) bool {
		return req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/Tables")
	}}))
	svc, err := env.NewTableService(opts)
	if err != nil {
		t.Fatal(err)
	}
	crashing, err := rotation.New(svc, svc.NewClient(f.catalog), rotation.Config[Attempt]{Name: f.name, Period: rotation.Hour, Time: attemptTime})
	if err != nil {
		t.Fatal(err)
	}
	a := attempts(hour(0), 1, 1)[0]
	if err := crashing.Insert(ctx, &a); err == nil {
		t.Fatal("insert succeeded although table creation failed")
	}
	r := f.open(t, env, rotation.Config[Attempt]{})
	if got := readAll(t, r, hour(0), hour(1), entity.Query{}); len(got) != 0 {
		t.Fatalf("read %d entities from a period without a table", len(got))
	}
	if err := r.Insert(ctx, &a); err != nil {
		t.Fatalf("the next writer: %v", err)
	}
	if got := readAll(t, r, hour(0), hour(1), entity.Query{}); len(got) != 1 {
		t.Fatalf("read %d entities, want 1", len(got))
	}
}

// Query merges the periods in key order, cuts the range inside the first
// and last period, and applies the limit to the merged result.
func TestQueryOrderRangeLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.open(t, env, rotation.Config[Attempt]{Period: 15 * time.Minute})
	var all []Attempt
	for q := range 6 {
		// The same users in every period: their keys interleave across
		// tables.
		start := base.Add(time.Duration(q) * 15 * time.Minute)
		for u := range 3 {
			for i := range 4 {
				at := start.Add(time.Duration(i) * 3 * time.Minute)
				all = append(all, Attempt{PartitionKey: fmt.Sprintf("u%d", u), RowKey: keys.TicksKeySeq(at, 0), At: at})
			}
		}
	}
	write(t, r, all)
	from, to := base.Add(20*time.Minute), base.Add(70*time.Minute)
	var in []Attempt
	for _, a := range all {
		if !a.At.Before(from) && a.At.Before(to) {
			in = append(in, a)
		}
	}
	got := readAll(t, r, from, to, entity.Query{PageSize: 3})
	if !slices.Equal(keysOf(got), sorted(in)) {
		t.Fatalf("range read\n%v\nwant\n%v", keysOf(got), sorted(in))
	}
	got = readAll(t, r, from, to, entity.Query{Limit: 7, PageSize: 2})
	if !slices.Equal(keysOf(got), sorted(in)[:7]) {
		t.Fatalf("limited read %v, want %v", keysOf(got), sorted(in)[:7])
	}
	got = readAll(t, r, base, base.Add(2*time.Hour), entity.Query{Filter: filter.PK("u1")})
	var u1 []Attempt
	for _, a := range all {
		if a.PartitionKey == "u1" {
			u1 = append(u1, a)
		}
	}
	if !slices.Equal(keysOf(got), sorted(u1)) {
		t.Fatalf("filtered read %d entities, want %d", len(got), len(u1))
	}
	ps, err := r.Periods(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 4 || !ps[0].Start.Equal(base.Add(15*time.Minute)) || !ps[3].End.Equal(base.Add(75*time.Minute)) {
		t.Fatalf("periods %v, want the four 15-minute periods from 10:15 to 11:15", ps)
	}
}

// Bad configurations and arguments are refused before any request.
func TestValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	e := env.With(meter.Policy())
	catalog := e.TableService.NewClient("nocatalog")
	good := rotation.Config[Attempt]{Name: "logins", Time: attemptTime}
	for name, cfg := range map[string]rotation.Config[Attempt]{
		"empty name":      {Time: attemptTime},
		"digit first":     {Name: "1logins", Time: attemptTime},
		"underscore":      {Name: "log_ins", Time: attemptTime},
		"too long":        {Name: strings.Repeat("a", rotation.MaxNameLength+1), Time: attemptTime},
		"seconds":         {Name: "logins", Period: 90 * time.Second, Time: attemptTime},
		"negative period": {Name: "logins", Period: -time.Hour, Time: attemptTime},
		"no time":         {Name: "logins"},
		"too far ahead":   {Name: "logins", Time: attemptTime, Ahead: 100},
	} {
		_, err := rotation.New(e.TableService, catalog, cfg)
		var ce *rotation.ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s: %v, want a *ConfigError matching entity.ErrInvalid", name, err)
		}
	}
	if _, err := rotation.New(e.TableService, catalog, rotation.Config[Attempt]{Name: strings.Repeat("a", rotation.MaxNameLength), Time: attemptTime}); err != nil {
		t.Errorf("longest name: %v", err)
	}
	r, err := rotation.New(e.TableService, catalog, good)
	if err != nil {
		t.Fatal(err)
	}
	old := Attempt{PartitionKey: "a", RowKey: "b", At: time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := r.Insert(ctx, &old); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("time in 1500: %v, want entity.ErrInvalid", err)
	}
	for range r.Query(ctx, hour(2), hour(1), entity.Query{}) {
	}
	if _, err := r.Periods(ctx, hour(2), hour(1)); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("reversed range: %v, want entity.ErrInvalid", err)
	}
	if n := meter.Snapshot().Total(); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
}

// A rotation keeps its period: another period with the same name is
// refused, not mixed into the catalog.
func TestPeriodMismatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	write(t, f.open(t, env, rotation.Config[Attempt]{Period: rotation.Hour}), attempts(hour(0), 1, 1))
	daily := f.open(t, env, rotation.Config[Attempt]{Period: rotation.Day})
	a := attempts(hour(0), 1, 1)[0]
	err := daily.Insert(ctx, &a)
	var ce *rotation.ConfigError
	if !errors.As(err, &ce) || ce.Field != "Period" {
		t.Fatalf("daily writer on an hourly rotation: %v, want a Period *ConfigError", err)
	}
}
