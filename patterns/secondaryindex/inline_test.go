package secondaryindex_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/internal/patterntest/indextest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// The tests of a unique TableWide index kept by an inline processor of
// patterns/eventual (eventual.NewInline): the writer runs the index's
// handler itself, after its transaction; no queue, no worker.

// inlineRecorder keeps what an inline processor's hooks report.
type inlineRecorder struct {
	mu       sync.Mutex
	outcomes []eventual.Outcome
	errs     []error
}

func (r *inlineRecorder) hooks() eventual.Hooks {
	return eventual.Hooks{
		Outcome: func(o eventual.Outcome) { r.mu.Lock(); r.outcomes = append(r.outcomes, o); r.mu.Unlock() },
		Error:   func(err error) { r.mu.Lock(); r.errs = append(r.errs, err); r.mu.Unlock() },
	}
}

func (r *inlineRecorder) errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errs)
}

// inlineSetOn returns an inline processor and the Set of tbl with the
// email index (unique) TableWide, its clients made from e, relaying
// intents however young (OutboxConfig.Grace NoGrace).
func inlineSetOn(t testing.TB, e *integration.Env, tbl *entity.Table[Employee], hooks eventual.Hooks) (*secondaryindex.Set[Employee], *eventual.Processor) {
	t.Helper()
	p, err := eventual.NewInline(eventual.Config{Hooks: hooks})
	if err != nil {
		t.Fatal(err)
	}
	email := emailIndex(secondaryindex.TableWide)
	email.Buckets = 4
	s, err := secondaryindex.New(patterntest.View[Employee](t, e, tbl), secondaryindex.Config{
		PrimaryPrefix: "empid_",
		Processor:     p,
		Outbox:        eventual.OutboxConfig{Grace: eventual.NoGrace},
	}, email)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// inlineState reads the table named name with a raw aztables client and
// checks the converged state of a Set of the email index: every primary
// with an email has exactly one entry, which names it, holds its email
// and no claim (the handler ran); no entry names a primary that does not
// hold its value; no outbox intent is left; and a lookup without Verify
// finds each primary by its email. It returns the primaries' RowKeys by
// email.
func inlineState(t testing.TB, s *secondaryindex.Set[Employee], name string) map[string]string {
	t.Helper()
	ctx := context.Background()
	pager := env.TableService.NewClient(name).NewListEntitiesPager(nil)
	primaries := map[string]map[string]any{} // by pk/rk
	var entries []map[string]any
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range page.Entities {
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			pk, rk := m["PartitionKey"].(string), m["RowKey"].(string)
			switch {
			case strings.HasPrefix(rk, "empid_"):
				primaries[pk+"/"+rk] = m
			case strings.HasPrefix(rk, eventual.OutboxPrefix), strings.HasPrefix(rk, eventual.UnsendablePrefix):
				t.Errorf("intent %s/%s left", pk, rk)
			case m[secondaryindex.PropPrimaryPK] != nil:
				entries = append(entries, m)
			}
		}
	}
	owned := map[string]int{}
	for _, en := range entries {
		owner := fmt.Sprint(en[secondaryindex.PropPrimaryPK], "/", en[secondaryindex.PropPrimaryRK])
		where := fmt.Sprint(en["PartitionKey"], "/", en["RowKey"])
		p, ok := primaries[owner]
		switch {
		case !ok:
			t.Errorf("entry %s names %s, which does not exist", where, owner)
		case en[secondaryindex.PropClaim] != nil:
			t.Errorf("entry %s of %s still holds a claim: its handler did not finish", where, owner)
		case !strings.HasSuffix(en["RowKey"].(string), strings.ToLower(fmt.Sprint(p["Email"]))):
			t.Errorf("entry %s of %s, whose email is %v", where, owner, p["Email"])
		}
		owned[owner]++
	}
	byEmail := map[string]string{}
	for k, p := range primaries {
		email, _ := p["Email"].(string)
		if email == "" {
			continue
		}
		if owned[k] != 1 {
			t.Errorf("%s (%s) has %d entries, want 1", k, email, owned[k])
		}
		byEmail[strings.ToLower(email)] = p["RowKey"].(string)
		got, err := s.LookupValue(ctx, "email", email, secondaryindex.LookupOptions{})
		if err != nil || got.PartitionKey+"/"+got.RowKey != k {
			t.Errorf("LookupValue(%s) without Verify: %s/%s, %v; want %s", email, got.PartitionKey, got.RowKey, err, k)
		}
	}
	return byEmail
}

// TestInlineTableWideWithoutAWorker: a Set whose unique TableWide email
// index is kept by an inline processor, and no worker anywhere. Insert
// returns with the entry written (no claim left: the handler ran in the
// writer), found by a lookup without Verify; Modify of the email leaves
// the new entry and not the old one; Delete removes the entry; each
// checked at once, with a raw client, and Check finds no drift.
// Provision creates the table and nothing else.
func TestInlineTableWideWithoutAWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	rec := &inlineRecorder{}
	s, _ := inlineSetOn(t, env, tbl, rec.hooks())
	if err := s.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		e := Employee{PartitionKey: fmt.Sprintf("D%d", i), RowKey: empid(i), FirstName: "John", LastName: "Jones", Email: fmt.Sprintf("jones%d@contoso.com", i)}
		if err := s.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
		got, err := s.LookupValue(ctx, "email", e.Email, secondaryindex.LookupOptions{})
		if err != nil || got.RowKey != e.RowKey {
			t.Fatalf("LookupValue right after Insert %d: %+v, %v", i, got, err)
		}
		if byEmail := inlineState(t, s, tbl.Name()); len(byEmail) != i+1 {
			t.Fatalf("after Insert %d: %v", i, byEmail)
		}
	}
	if _, err := s.Modify(ctx, "D0", empid(0), func(e *Employee) error {
		e.Email = "john.jones@contoso.com"
		return nil
	}, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LookupValue(ctx, "email", "jones0@contoso.com", secondaryindex.LookupOptions{}); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("the old email after Modify: %v", err)
	}
	if byEmail := inlineState(t, s, tbl.Name()); byEmail["john.jones@contoso.com"] != empid(0) || len(byEmail) != 3 {
		t.Errorf("after Modify: %v", byEmail)
	}
	if err := s.Delete(ctx, "D1", empid(1), entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LookupValue(ctx, "email", "jones1@contoso.com", secondaryindex.LookupOptions{}); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("the deleted employee's email: %v", err)
	}
	if byEmail := inlineState(t, s, tbl.Name()); len(byEmail) != 2 {
		t.Errorf("after Delete: %v", byEmail)
	}
	if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
		t.Errorf("drift: %v", fs)
	}
	if errs := rec.errors(); len(errs) != 0 {
		t.Errorf("the processor reported %v", errs)
	}
}

// cutAfterCommit is a pipeline policy that calls cut at the first request
// after a transaction ($batch) was answered, and fails that request
// unsent: the writer's context ends between its commit and the index's
// handler.
type cutAfterCommit struct {
	mu        sync.Mutex
	committed bool
	cut       func()
}

func (c *cutAfterCommit) Do(req *policy.Request) (*http.Response, error) {
	c.mu.Lock()
	cut := c.committed && c.cut != nil
	if cut {
		c.cut()
		c.cut = nil
	}
	c.mu.Unlock()
	if cut {
		return nil, context.Canceled
	}
	resp, err := req.Next()
	if err == nil && req.Raw().Method == http.MethodPost && strings.HasSuffix(req.Raw().URL.Path, "$batch") && resp.StatusCode == http.StatusAccepted {
		c.mu.Lock()
		c.committed = true
		c.mu.Unlock()
	}
	return resp, err
}

// TestInlineTableWideCutAfterCommit: the writer's context ends right after
// its transaction committed (injected by a policy that cancels it once
// the $batch reply is in), so the handler that writes the entry fails.
// The primary is written, its intent stays, the entry is still a
// reservation, and the failure is reported to the processor's
// Hooks.Error, not as the Insert's; a later Relay finishes it: exactly
// one entry, no intent left.
func TestInlineTableWideCutAfterCommit(t *testing.T) {
	t.Parallel()
	tbl := employees(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &inlineRecorder{}
	s, _ := inlineSetOn(t, env.With(&cutAfterCommit{cut: cancel}), tbl, rec.hooks())
	e := Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "John", LastName: "Jones", Email: "jones@contoso.com"}
	if err := s.Insert(ctx, &e); err != nil {
		t.Fatalf("Insert reported what happened after its commit: %v", err)
	}
	if errs := rec.errors(); len(errs) == 0 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("Hooks.Error got %v, want the handler's cancelled run", errs)
	}
	healthy, _ := inlineSetOn(t, env, tbl, eventual.Hooks{})
	if _, err := tbl.Get(context.Background(), "Sales", empid(1)); err != nil {
		t.Fatalf("the primary: %v", err)
	}
	intents := 0
	for _, k := range rowKeys(t, tbl, "Sales") {
		if strings.Contains(k, "/"+eventual.OutboxPrefix) {
			intents++
		}
	}
	if intents != 1 {
		t.Fatalf("%d intents after the cut, want 1", intents)
	}
	sent, err := healthy.Relay(context.Background())
	if sent != 1 || err != nil {
		t.Fatalf("Relay: %d, %v", sent, err)
	}
	if byEmail := inlineState(t, healthy, tbl.Name()); byEmail["jones@contoso.com"] != empid(1) {
		t.Errorf("after Relay: %v", byEmail)
	}
}

// TestInlineTableWideCrashAtEveryStep changes an employee's email through
// an inline Set and kills the process before, and after, each storage
// request in turn: the read, the reservation, the transaction with the
// intent, the handler's reads and entry writes, the old entry's delete,
// the intent's delete. Recovery is the writer's call again when it never
// returned success, then a Relay; after it, each employee has exactly
// one entry, for the email it holds, and no intent is left.
func TestInlineTableWideCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	n := crashtest.EveryStep(t, env, crashtest.Scenario{Timeout: time.Minute, Prepare: func(t *testing.T) crashtest.Run {
		ctx := context.Background()
		tbl := employees(t, env)
		s, _ := inlineSetOn(t, env, tbl, eventual.Hooks{})
		for i, email := range []string{"jonesj@contoso.com", "other@contoso.com"} {
			e := Employee{PartitionKey: "Sales", RowKey: empid(i), FirstName: "John", LastName: "Jones", Email: email}
			if err := s.Insert(ctx, &e); err != nil {
				t.Fatal(err)
			}
		}
		change := func(e *Employee) error {
			e.Email = "john.jones@contoso.com"
			return nil
		}
		var wrote bool
		return crashtest.Run{
			Work: func(ctx context.Context, kenv *integration.Env) error {
				ks, _ := inlineSetOn(t, kenv, tbl, eventual.Hooks{})
				_, err := ks.Modify(ctx, "Sales", empid(0), change, entity.ModifyOptions{})
				wrote = err == nil
				return err
			},
			Recover: func(ctx context.Context) error {
				if !wrote {
					if _, err := s.Modify(ctx, "Sales", empid(0), change, entity.ModifyOptions{}); err != nil {
						return err
					}
				}
				_, err := s.Relay(ctx)
				return err
			},
			Check: func(t *testing.T) {
				byEmail := inlineState(t, s, tbl.Name())
				want := map[string]string{"john.jones@contoso.com": empid(0), "other@contoso.com": empid(1)}
				if fmt.Sprint(byEmail) != fmt.Sprint(want) {
					t.Errorf("emails %v, want %v", byEmail, want)
				}
			},
		}
	}})
	// read, reservation (read, insert), transaction, handler (reads,
	// entry update, old entry delete), intent delete.
	if n < 8 {
		t.Errorf("the scenario made %d requests", n)
	}
}

// TestInlineTableWideConcurrentUnique: eight writers insert eight
// employees with one email at once through inline Sets: exactly one
// succeeds, the others get a *UniqueError, and the final state holds the
// winner and its one entry.
func TestInlineTableWideConcurrentUnique(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		s, _ := inlineSetOn(t, env, tbl, eventual.Hooks{})
		wg.Go(func() {
			<-start
			e := Employee{PartitionKey: fmt.Sprintf("D%d", i), RowKey: empid(i), FirstName: "John", LastName: "Jones", Email: "shared@contoso.com"}
			errs[i] = s.Insert(ctx, &e)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		var ue *secondaryindex.UniqueError
		switch {
		case err == nil && winner < 0:
			winner = i
		case err == nil:
			t.Errorf("writers %d and %d both inserted the value", winner, i)
		case !errors.As(err, &ue):
			t.Errorf("writer %d: %v, want a *UniqueError", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no writer won: %v", errs)
	}
	s, _ := inlineSetOn(t, env, tbl, eventual.Hooks{})
	if byEmail := inlineState(t, s, tbl.Name()); len(byEmail) != 1 || byEmail["shared@contoso.com"] != empid(winner) {
		t.Errorf("final state %v, want writer %d alone", byEmail, winner)
	}
}

// TestInlineTableWideLostReplies inserts, modifies and deletes employees
// through an inline Set whose clients lose a fifth of the replies of
// requests the service executed (azcore resends them), each write
// retried by the caller until it is reported done, then relays: the
// final state, read with a raw client, is exact — one entry per
// employee, for its email, none for the deleted, no intent.
func TestInlineTableWideLostReplies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	inj := faults.New(faults.Config{LoseReply: 0.2, Seed: 7})
	s, _ := inlineSetOn(t, patterntest.Faulty(env, inj), tbl, eventual.Hooks{})
	retry := func(what string, f func() error, done ...error) {
		t.Helper()
		for range 10 {
			err := f()
			if err == nil || slices.ContainsFunc(done, func(d error) bool { return errors.Is(err, d) }) {
				return
			}
			t.Logf("%s: %v (again)", what, err)
		}
		t.Fatalf("%s failed 10 times", what)
	}
	const n = 6
	for i := range n {
		e := Employee{PartitionKey: fmt.Sprintf("D%d", i%2), RowKey: empid(i), FirstName: "John", LastName: "Jones", Email: fmt.Sprintf("jones%d@contoso.com", i)}
		// ErrAlreadyExists: an earlier try was applied.
		retry("insert", func() error { c := e; return s.Insert(ctx, &c) }, entity.ErrAlreadyExists)
	}
	for i := range 3 {
		retry("modify", func() error {
			_, err := s.Modify(ctx, fmt.Sprintf("D%d", i%2), empid(i), func(e *Employee) error {
				e.Email = fmt.Sprintf("new%d@contoso.com", i)
				return nil
			}, entity.ModifyOptions{})
			return err
		})
	}
	for i := 4; i < n; i++ {
		retry("delete", func() error { return s.Delete(ctx, fmt.Sprintf("D%d", i%2), empid(i), entity.AnyETag) }, entity.ErrNotFound)
	}
	if st := inj.Stats(); st.LostReplies == 0 {
		t.Fatalf("no reply lost: %+v", st)
	}
	healthy, _ := inlineSetOn(t, env, tbl, eventual.Hooks{})
	if _, err := healthy.Relay(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"new0@contoso.com": empid(0), "new1@contoso.com": empid(1), "new2@contoso.com": empid(2), "jones3@contoso.com": empid(3)}
	if byEmail := inlineState(t, healthy, tbl.Name()); fmt.Sprint(byEmail) != fmt.Sprint(want) {
		t.Errorf("emails %v, want %v", byEmail, want)
	}
	t.Logf("injector: %+v", inj.Stats())
}

// BenchmarkTableWideInlineInsert inserts orders with a unique TableWide
// index on the order number and looks each up (LookupValue, no Verify)
// until it is found: /inline keeps the index with an inline processor
// (the writer runs the handler; no queue), /queued with a queued one and
// a worker running beside it (the setup of BenchmarkTableWideIndexedInsert),
// /raw is the hand-written least: the order's insert then the entry's
// insert, two aztables requests, neither crash-safe nor checked for
// uniqueness before the order is written. storage-tx/op counts the
// writer's and the worker's requests but the worker's receives
// (receive-tx/op: they depend on the polling, not on the insert);
// until-found-µs/op is the time from the insert's start to the first
// lookup that finds it, until-final-µs/op to its entry read final (no
// claim: the handler ran) with a raw client — a unique lookup finds the
// writer's reservation before the handler ran, so the two differ for
// /queued. /paired alternates /inline and /queued, each until its entry
// is final, so that speed-vs-queued (the queued time over the inline)
// compares the same moments.
func BenchmarkTableWideInlineInsert(b *testing.B) {
	ctx := context.Background()
	type side struct {
		insert func(i int) error
		found  func(i int) (bool, error) // a lookup finds it
		final  func(i int) (bool, error) // its entry is final
		stop   func()
	}
	number := func(i int) string { return fmt.Sprintf("order%06d", i) }
	orderOf := func(i int) Employee {
		return Employee{PartitionKey: fmt.Sprintf("cust%02d", i%40), RowKey: empid(i), FirstName: "John", LastName: "Jones", Email: number(i), Age: 34}
	}
	lookupOn := func(ls *secondaryindex.Set[Employee]) func(i int) (bool, error) {
		return func(i int) (bool, error) {
			e, err := ls.LookupValue(ctx, "email", number(i), secondaryindex.LookupOptions{})
			if errors.Is(err, entity.ErrNotFound) {
				return false, nil
			}
			return err == nil && e.RowKey == empid(i), err
		}
	}
	email := emailIndex(secondaryindex.TableWide)
	entryOf := func(i int) (string, string) {
		return "email_" + keys.Bucket(number(i), secondaryindex.DefaultBuckets), "email_" + number(i)
	}
	// final reports whether order i's entry in table name is written and
	// no longer a reservation (its handler ran), read with a raw client.
	finalOn := func(name string) func(i int) (bool, error) {
		c := env.TableService.NewClient(name)
		return func(i int) (bool, error) {
			pk, rk := entryOf(i)
			resp, err := c.GetEntity(ctx, pk, rk, nil)
			if err != nil {
				return false, nil
			}
			var m map[string]any
			if err := json.Unmarshal(resp.Value, &m); err != nil {
				return false, err
			}
			return m[secondaryindex.PropClaim] == nil, nil
		}
	}
	inline := func(b *testing.B, meter *cost.Meter) side {
		metered := env.With(meter.Policy())
		tbl := employees(b, metered)
		p, err := eventual.NewInline(eventual.Config{})
		if err != nil {
			b.Fatal(err)
		}
		s, err := secondaryindex.New(tbl, secondaryindex.Config{PrimaryPrefix: "empid_", Processor: p}, email)
		if err != nil {
			b.Fatal(err)
		}
		lp, err := eventual.NewInline(eventual.Config{})
		if err != nil {
			b.Fatal(err)
		}
		ls, err := secondaryindex.New(patterntest.View[Employee](b, env, tbl), secondaryindex.Config{PrimaryPrefix: "empid_", Processor: lp}, email)
		if err != nil {
			b.Fatal(err)
		}
		return side{insert: func(i int) error { e := orderOf(i); return s.Insert(ctx, &e) }, found: lookupOn(ls), final: finalOn(tbl.Name()), stop: func() {}}
	}
	queued := func(b *testing.B, meter *cost.Meter) side {
		metered := env.With(meter.Policy())
		tbl := employees(b, metered)
		qs := patterntest.Queues(b, env, 1)
		pcfg := fast()
		pcfg.Workers, pcfg.PollInterval, pcfg.MaxPollInterval = 1, 10*time.Millisecond, 10*time.Millisecond
		p, err := eventual.New(patterntest.SameQueues(b, metered, qs), nil, pcfg)
		if err != nil {
			b.Fatal(err)
		}
		s, err := secondaryindex.New(tbl, withProcessor(remoteConfig(nil), p), email)
		if err != nil {
			b.Fatal(err)
		}
		lp, err := eventual.New(patterntest.SameQueues(b, env, qs), nil, pcfg)
		if err != nil {
			b.Fatal(err)
		}
		ls, err := secondaryindex.New(patterntest.View[Employee](b, env, tbl), withProcessor(remoteConfig(nil), lp), email)
		if err != nil {
			b.Fatal(err)
		}
		rctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := p.Run(rctx); err != nil {
				b.Error(err)
			}
		})
		stop := func() {
			defer wg.Wait()
			defer cancel()
			for {
				n, err := patterntest.MessageCount(context.Background(), qs[0].Work)
				if err != nil || n == 0 {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		return side{insert: func(i int) error { e := orderOf(i); return s.Insert(ctx, &e) }, found: lookupOn(ls), final: finalOn(tbl.Name()), stop: stop}
	}
	raw := func(b *testing.B, meter *cost.Meter) side {
		metered := env.With(meter.Policy())
		tbl := employees(b, metered)
		c := metered.TableService.NewClient(tbl.Name())
		plain := env.TableService.NewClient(tbl.Name())
		entry := entryOf
		return side{
			insert: func(i int) error {
				e := orderOf(i)
				body := fmt.Appendf(nil, `{"PartitionKey":%q,"RowKey":%q,"FirstName":%q,"LastName":%q,"Email":%q,"Age":%d}`, e.PartitionKey, e.RowKey, e.FirstName, e.LastName, e.Email, e.Age)
				if _, err := c.AddEntity(ctx, body, nil); err != nil {
					return err
				}
				pk, rk := entry(i)
				_, err := c.AddEntity(ctx, fmt.Appendf(nil, `{"PartitionKey":%q,"RowKey":%q,%q:%q,%q:%q}`, pk, rk, secondaryindex.PropPrimaryPK, e.PartitionKey, secondaryindex.PropPrimaryRK, e.RowKey), nil)
				return err
			},
			found: func(i int) (bool, error) {
				pk, rk := entry(i)
				_, err := plain.GetEntity(ctx, pk, rk, nil)
				return err == nil, nil
			},
			final: func(int) (bool, error) { return true, nil },
			stop:  func() {},
		}
	}
	// untilFound inserts order i, then polls until a lookup finds it and
	// its entry is final; it returns the times from the insert's start to
	// its return, to the first lookup that found it, and to the entry
	// being final.
	untilFound := func(b *testing.B, x side, i int) (insert, found, final time.Duration) {
		t0 := time.Now()
		if err := x.insert(i); err != nil {
			b.Fatal(err)
		}
		insert = time.Since(t0)
		for found == 0 || final == 0 {
			if found == 0 {
				ok, err := x.found(i)
				if err != nil {
					b.Fatal(err)
				}
				if ok {
					found = time.Since(t0)
				}
			}
			if found != 0 && final == 0 {
				ok, err := x.final(i)
				if err != nil {
					b.Fatal(err)
				}
				if ok {
					final = time.Since(t0)
				}
			}
			if found == 0 || final == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		return insert, found, final
	}
	for _, c := range []struct {
		name string
		make func(*testing.B, *cost.Meter) side
	}{{"inline", inline}, {"queued", queued}, {"raw", raw}} {
		b.Run(c.name, func(b *testing.B) {
			meter := cost.NewMeter()
			x := c.make(b, meter)
			start := meter.Snapshot()
			var insert, found, final time.Duration
			for i := 0; b.Loop(); i++ {
				d, f, fin := untilFound(b, x, i)
				insert += d
				found += f
				final += fin
			}
			b.StopTimer()
			x.stop()
			used := meter.Snapshot().Sub(start)
			receives := used.Count(cost.Queue, cost.OpGetMessages)
			b.ReportMetric(float64(used.Total()-receives)/float64(b.N), "storage-tx/op")
			b.ReportMetric(float64(receives)/float64(b.N), "receive-tx/op")
			b.ReportMetric(float64(insert.Microseconds())/float64(b.N), "insert-µs/op")
			b.ReportMetric(float64(found.Microseconds())/float64(b.N), "until-found-µs/op")
			b.ReportMetric(float64(final.Microseconds())/float64(b.N), "until-final-µs/op")
			b.Logf("%d inserts: %v", b.N, used)
		})
	}
	b.Run("paired", func(b *testing.B) {
		in, q := inline(b, cost.NewMeter()), queued(b, cost.NewMeter())
		paired(b, []string{"inline", "queued"},
			func(i int) { untilFound(b, in, i) },
			func(i int) { untilFound(b, q, i) })
		b.StopTimer()
		q.stop()
	})
}

// TestInlineTableWideFailedInsertFreesAfterGrace: an insert whose
// transaction never reaches the service (every $batch failed before
// sending, injected) fails after reserving its email; its release runs
// inline at once and cannot free a reservation younger than Grace, so
// the reservation stays: another employee's insert of the email is a
// pending *UniqueError until Grace has passed (the reservation read a
// minute older than the service's clock says, AgeReservations), and then
// takes the value over. The final state has the
// second employee alone, with one entry.
func TestInlineTableWideFailedInsertFreesAfterGrace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	inj := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "$batch")
	}})
	broken, _ := inlineSetOn(t, env.With(inj), tbl, eventual.Hooks{})
	first := Employee{PartitionKey: "D0", RowKey: empid(0), FirstName: "John", LastName: "Jones", Email: "jones@contoso.com"}
	if err := broken.Insert(ctx, &first); err == nil {
		t.Fatal("an insert whose transaction was never sent succeeded")
	}
	second := Employee{PartitionKey: "D1", RowKey: empid(1), FirstName: "Jim", LastName: "Jones", Email: "jones@contoso.com"}
	s, _ := inlineSetOn(t, env, tbl, eventual.Hooks{})
	var ue *secondaryindex.UniqueError
	if err := s.Insert(ctx, &second); !errors.As(err, &ue) || !ue.Pending {
		t.Fatalf("an insert of the reserved email within Grace: %v, want a pending *UniqueError", err)
	}
	p, err := eventual.NewInline(eventual.Config{})
	if err != nil {
		t.Fatal(err)
	}
	email := emailIndex(secondaryindex.TableWide)
	email.Buckets = 4
	later, err := secondaryindex.New(patterntest.View[Employee](t, env, tbl), secondaryindex.Config{
		PrimaryPrefix: "empid_", Processor: p, Outbox: eventual.OutboxConfig{Grace: eventual.NoGrace},
	}, email)
	if err != nil {
		t.Fatal(err)
	}
	secondaryindex.AgeReservations(later, time.Minute)
	if err := later.Insert(ctx, &second); err != nil {
		t.Fatalf("an insert of the email after Grace: %v", err)
	}
	if byEmail := inlineState(t, s, tbl.Name()); len(byEmail) != 1 || byEmail["jones@contoso.com"] != empid(1) {
		t.Errorf("final state %v, want the second employee alone", byEmail)
	}
}

// TestInlineSuite runs indextest.Inline, the scenario both index packages
// share: with an inline processor the OtherPartition and TableWide entries
// are exact as soon as each write returns, with no queue and no worker.
func TestInlineSuite(t *testing.T) {
	t.Parallel()
	indextest.Inline(t, suite())
}

// TestReservationAgeIgnoresClockSkew: a reservation's age is read on the
// service's clock (the Date of the answer that returned it), not this
// process's. An insert whose transaction never reaches the service
// (injected) leaves its email reserved; a Set whose clock (Config.Now)
// runs three minutes ahead — past the 10 s Grace — still finds the
// reservation young, a pending *UniqueError, where reading the age with
// its clock would free the value under a writer that may still be sending
// its insert. A Set whose clock runs three minutes behind takes the value
// over once Grace has passed on the service's clock (the reservation read
// a minute older, AgeReservations), where its own clock would keep it
// reserved for three minutes more.
func TestReservationAgeIgnoresClockSkew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	inj := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "$batch")
	}})
	broken, _ := inlineSetOn(t, env.With(inj), tbl, eventual.Hooks{})
	first := Employee{PartitionKey: "D0", RowKey: empid(0), FirstName: "John", LastName: "Jones", Email: "jones@contoso.com"}
	if err := broken.Insert(ctx, &first); err == nil {
		t.Fatal("an insert whose transaction was never sent succeeded")
	}
	skewed := func(skew time.Duration) *secondaryindex.Set[Employee] {
		p, err := eventual.NewInline(eventual.Config{})
		if err != nil {
			t.Fatal(err)
		}
		email := emailIndex(secondaryindex.TableWide)
		email.Buckets = 4
		s, err := secondaryindex.New(patterntest.View[Employee](t, env, tbl), secondaryindex.Config{
			PrimaryPrefix: "empid_", Processor: p, Outbox: eventual.OutboxConfig{Grace: eventual.NoGrace},
			Now: func() time.Time { return time.Now().Add(skew) },
		}, email)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	second := Employee{PartitionKey: "D1", RowKey: empid(1), FirstName: "Jim", LastName: "Jones", Email: "jones@contoso.com"}
	var ue *secondaryindex.UniqueError
	if err := skewed(3*time.Minute).Insert(ctx, &second); !errors.As(err, &ue) || !ue.Pending {
		t.Fatalf("an insert of the reserved email with a clock 3 min ahead: %v, want a pending *UniqueError", err)
	}
	behind := skewed(-3 * time.Minute)
	secondaryindex.AgeReservations(behind, time.Minute)
	if err := behind.Insert(ctx, &second); err != nil {
		t.Fatalf("an insert of the email after Grace with a clock 3 min behind: %v", err)
	}
	if byEmail := inlineState(t, behind, tbl.Name()); len(byEmail) != 1 || byEmail["jones@contoso.com"] != empid(1) {
		t.Errorf("final state %v, want the second employee alone", byEmail)
	}
}

// afterCommit fails, with a 503 on every try, each single-entity write
// outside the primaries' partition (Sales) that follows a committed
// $batch while broken is set: the inline handler's entry writes, never
// the write itself, nor Relay's reads, counts and transactions.
type afterCommit struct {
	broken    atomic.Bool
	committed atomic.Bool
}

func (a *afterCommit) Do(req *policy.Request) (*http.Response, error) {
	single := req.Raw().Method != http.MethodGet && !strings.HasSuffix(req.Raw().URL.Path, "$batch") && !strings.Contains(req.Raw().URL.Path, "'Sales'")
	if a.broken.Load() && a.committed.Load() && single {
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: req.Raw()}, nil
	}
	resp, err := req.Next()
	if err == nil && req.Raw().Method == http.MethodPost && strings.HasSuffix(req.Raw().URL.Path, "$batch") && resp.StatusCode == http.StatusAccepted {
		a.committed.Store(true)
	}
	return resp, err
}

// TestInlineTableWidePoisonedAndRevived: the index handler of an inline
// Set fails on every run (the entry table answers 503 after the write's
// commit). The write still succeeds; after the processor's MaxDeliveries
// (2) runs — Insert's own and one Relay's — the intent is set aside, and
// Set.Unsendable lists it with the handler's error. Once the service
// answers again, Set.Revive and a Relay bring the entry up: exactly one
// entry, no claim and no intent left, read raw, and the lookup finds the
// employee.
func TestInlineTableWidePoisonedAndRevived(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	fault := &afterCommit{}
	fault.broken.Store(true)
	p, err := eventual.NewInline(eventual.Config{MaxDeliveries: 2})
	if err != nil {
		t.Fatal(err)
	}
	email := emailIndex(secondaryindex.TableWide)
	email.Buckets = 4
	opts := env.ClientOptions()
	opts.Retry.MaxRetries = 1
	s, err := secondaryindex.New(patterntest.View[Employee](t, env.WithOptions(func(o *azcore.ClientOptions) {
		o.Retry = opts.Retry
		o.PerRetryPolicies = append(o.PerRetryPolicies, fault)
	}), tbl), secondaryindex.Config{PrimaryPrefix: "empid_", Processor: p, Outbox: eventual.OutboxConfig{Grace: eventual.NoGrace}}, email)
	if err != nil {
		t.Fatal(err)
	}
	e := Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "John", LastName: "Jones", Email: "jones@contoso.com"}
	if err := s.Insert(ctx, &e); err != nil {
		t.Fatalf("Insert, its handler failing after the commit: %v", err)
	}
	if _, err := s.Relay(ctx); !errors.Is(err, eventual.ErrPoisoned) {
		t.Fatalf("Relay of the second failing run: %v, want ErrPoisoned", err)
	}
	var set []eventual.UnsendableIntent
	for u, err := range s.Unsendable(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, u)
	}
	if len(set) != 1 || set[0].PartitionKey != "Sales" || !strings.HasPrefix(set[0].Reason, eventual.ReasonFailed) {
		t.Fatalf("set aside: %+v, want the one intent with the handler's failure", set)
	}
	fault.broken.Store(false)
	if err := s.Revive(ctx, "Sales", set[0].Message.ID); err != nil {
		t.Fatalf("Revive: %v", err)
	}
	if sent, err := s.Relay(ctx); sent != 1 || err != nil {
		t.Fatalf("Relay after Revive: %d, %v", sent, err)
	}
	if byEmail := inlineState(t, s, tbl.Name()); byEmail["jones@contoso.com"] != empid(1) {
		t.Errorf("after Revive and Relay: %v", byEmail)
	}
}
