package eventual_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// failing returns a fail func for inlinePayroll that fails the first n
// runs with err (n < 0: every run).
func failing(n int32, err error) func() error {
	var left atomic.Int32
	left.Store(n)
	return func() error {
		if n < 0 || left.Add(-1) >= 0 {
			return err
		}
		return nil
	}
}

// dequeueCounts lists the DequeueCount of each run of the handler so far.
func (ip *inlinePayroll) dequeueCounts() []int64 {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	var ns []int64
	for _, d := range ip.deliveries {
		ns = append(ns, d.DequeueCount)
	}
	return ns
}

// raw reads the employees' partition as the service stores it, by
// RowKey.
func (ip *inlinePayroll) raw(t *testing.T) map[string]entity.DynamicEntity {
	t.Helper()
	bags, err := entity.ViewAs[entity.DynamicEntity](ip.emps)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]entity.DynamicEntity{}
	for _, row := range patterntest.Collect(t, bags.Query(context.Background(), entity.Query{})) {
		rows[row.RowKey] = row
	}
	return rows
}

// TestInlineGivesUpAfterMaxDeliveries: a handler that always fails
// (injected), MaxDeliveries 3. Submit runs it (DequeueCount 1), a Relay
// counts and runs it again (2, a *RelayError that is not set aside), the
// next (3) sets the intent aside: a *RelayError with SetAside and
// Poisoned matching ErrPoisoned and the handler's error, and Outcomes
// Retry, Retry, Poison (ReasonFailed). Read raw, the intent is gone and
// its set-aside row holds Runs 3 and a Reason naming the handler's
// error; a further Relay runs nothing. Revive brings it back with Runs 0:
// the next Relay runs it as DequeueCount 1, and once the handler
// succeeds, the raise is counted once and nothing is left.
func TestInlineGivesUpAfterMaxDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ip := newInlinePayroll(t)
	ip.seed(t)
	injected := errors.New("injected: the handler fails on every run")
	var broken atomic.Bool
	broken.Store(true)
	ip.fail = func() error {
		if broken.Load() {
			return injected
		}
		return nil
	}
	rec := newOutcomes()
	_, o := ip.on(t, env, eventual.Config{MaxDeliveries: 3, Hooks: rec.hooks()})
	if err := ip.raise(ctx, o); err != nil {
		t.Fatal(err)
	}
	id := ip.deliveries[0].ID
	if sent, err := o.Relay(ctx); sent != 0 || !errors.Is(err, injected) || errors.Is(err, eventual.ErrPoisoned) || errors.Is(err, eventual.ErrUnsendable) {
		t.Fatalf("Relay of run 2 of 3: %d, %v; want the handler's error, not set aside", sent, err)
	}
	sent, err := o.Relay(ctx)
	var re *eventual.RelayError
	if sent != 0 || !errors.As(err, &re) || !re.SetAside || !re.Poisoned || re.ID != id ||
		!errors.Is(err, eventual.ErrPoisoned) || errors.Is(err, eventual.ErrUnsendable) || !errors.Is(err, injected) {
		t.Fatalf("Relay of run 3 of 3: %d, %v; want it set aside as poisoned", sent, err)
	}
	if sent, err := o.Relay(ctx); sent != 0 || err != nil {
		t.Fatalf("Relay after the intent was set aside: %d, %v", sent, err)
	}
	if got := ip.dequeueCounts(); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("DequeueCounts %v, want 1 2 3", got)
	}
	outs := rec.list()
	want := []eventual.Result{eventual.Retry, eventual.Retry, eventual.Poison}
	if len(outs) != len(want) {
		t.Fatalf("outcomes %+v, want %v", outs, want)
	}
	for i, out := range outs {
		if out.Result != want[i] || out.DequeueCount != int64(i+1) || out.ID != id || !errors.Is(out.Err, injected) {
			t.Errorf("outcome %d: %+v, want %v of run %d with the handler's error", i, out, want[i], i+1)
		}
	}
	if last := outs[len(outs)-1]; last.Reason != eventual.ReasonFailed {
		t.Errorf("the poison outcome's Reason %q, want %q", last.Reason, eventual.ReasonFailed)
	}

	rows := ip.raw(t)
	if _, ok := rows[eventual.OutboxPrefix+id]; ok || len(rows) != 2 {
		t.Fatalf("rows %v: want the employee and the set-aside row, no intent", slices.Sorted(maps.Keys(rows)))
	}
	dead := rows[eventual.UnsendablePrefix+id]
	reason, _ := entity.Prop[string](&dead, "Reason")
	if runs, ok := entity.Prop[int32](&dead, "Runs"); !ok || runs != 3 {
		t.Errorf("set-aside row's Runs %v (%T), want 3", dead.Properties["Runs"], dead.Properties["Runs"])
	}
	if !strings.HasPrefix(reason, eventual.ReasonFailed) || !strings.Contains(reason, injected.Error()) {
		t.Errorf("set-aside Reason %q, want %q and the handler's error", reason, eventual.ReasonFailed)
	}
	if us := patterntest.Collect(t, o.Unsendable(ctx, "Sales")); len(us) != 1 || us[0].Message.ID != id || us[0].Reason != reason {
		t.Errorf("Unsendable: %+v", us)
	}
	if n, _ := ip.counted(t); n != 0 {
		t.Errorf("%d raises counted by a handler that always failed", n)
	}

	// Fixed and revived: the count starts over.
	broken.Store(false)
	if err := o.Revive(ctx, "Sales", id); err != nil {
		t.Fatal(err)
	}
	back := ip.raw(t)[eventual.OutboxPrefix+id]
	if runs, ok := entity.Prop[int32](&back, "Runs"); !ok || runs != 0 {
		t.Errorf("revived intent's Runs %v, want 0", back.Properties["Runs"])
	}
	if sent, err := o.Relay(ctx); sent != 1 || err != nil {
		t.Fatalf("Relay of the revived intent: %d, %v", sent, err)
	}
	if got := ip.dequeueCounts(); !slices.Equal(got, []int64{1, 2, 3, 1}) {
		t.Errorf("DequeueCounts %v, want 1 2 3 and 1 after Revive", got)
	}
	if n, rks := ip.counted(t); n != 1 || len(rks) != 1 {
		t.Errorf("after the revived run: %d counted, partition %v; want 1 and the employee alone", n, rks)
	}
}

// TestInlineFailsTwiceThenSucceeds: a handler that fails twice (injected)
// then succeeds runs exactly three times — Submit's run (DequeueCount 1)
// leaves an intent with no Runs property, which counts as one run; the
// first Relay's is run 2, the second's run 3 — with Outcomes Retry,
// Retry, Done; the intent is deleted, the raise counted once, and a
// further Relay runs nothing. Each count rewrites the intent (a later
// Timestamp), and the Relay of run 3 makes 5 requests: the query, the
// count, the handler's two, the delete.
func TestInlineFailsTwiceThenSucceeds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ip := newInlinePayroll(t)
	ip.seed(t)
	injected := errors.New("injected: fails twice")
	ip.fail = failing(2, injected)
	rec := newOutcomes()
	_, o := ip.on(t, env, eventual.Config{Hooks: rec.hooks()})
	if err := ip.raise(ctx, o); err != nil {
		t.Fatal(err)
	}
	id := ip.deliveries[0].ID
	in := ip.raw(t)[eventual.OutboxPrefix+id]
	if _, ok := in.Properties["Runs"]; ok || in.RowKey == "" {
		t.Fatalf("the intent Submit left: %+v; want one without Runs", in)
	}
	if sent, err := o.Relay(ctx); sent != 0 || !errors.Is(err, injected) {
		t.Fatalf("Relay of run 2: %d, %v", sent, err)
	}
	// The count rewrote the intent: its Timestamp is the run's, from which
	// OutboxConfig.Grace runs again.
	if again := ip.raw(t)[eventual.OutboxPrefix+id]; !again.Timestamp.After(in.Timestamp) || again.Properties["Runs"] != int32(2) {
		t.Errorf("after run 2 the intent has Timestamp %v (Submit's %v), Runs %v; want a later one, 2", again.Timestamp, in.Timestamp, again.Properties["Runs"])
	}
	// Run 3 through a Relay whose answered requests are counted: the
	// intents' query, the count, the handler's two (the department's read
	// and Once's transaction), the intent's delete.
	answered := &patterntest.Answered{}
	_, counted := ip.on(t, env.With(answered), eventual.Config{Hooks: rec.hooks()})
	if sent, err := counted.Relay(ctx); sent != 1 || err != nil {
		t.Fatalf("Relay of run 3: %d, %v", sent, err)
	}
	if n := answered.Total(); n != 5 {
		t.Errorf("the Relay of a successful run made %d requests, want 5", n)
	}
	if sent, err := o.Relay(ctx); sent != 0 || err != nil {
		t.Fatalf("a further Relay: %d, %v", sent, err)
	}
	if got := ip.dequeueCounts(); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("DequeueCounts %v, want 1 2 3", got)
	}
	var results []eventual.Result
	for _, out := range rec.list() {
		results = append(results, out.Result)
	}
	if !slices.Equal(results, []eventual.Result{eventual.Retry, eventual.Retry, eventual.Done}) {
		t.Errorf("outcomes %v, want retry retry done", results)
	}
	if n, rks := ip.counted(t); n != 1 || len(rks) != 1 {
		t.Errorf("%d counted, partition %v; want 1 and no intent", n, rks)
	}
}

// TestInlineRacingRelaysCountEachRunOnce: two Relays read one failing
// intent (Runs absent: run 1 was Submit's); just before the first sends
// its count of run 2, the second Relay runs whole (injected with
// patterntest.Before): it counts run 2 and runs it. The first Relay's
// count, conditional on the version it read, fails, and it leaves the
// intent without running it and without an error. Run 2 ran once; the
// next Relay's run is 3.
func TestInlineRacingRelaysCountEachRunOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ip := newInlinePayroll(t)
	ip.seed(t)
	injected := errors.New("injected: always fails")
	ip.fail = failing(-1, injected)
	_, o := ip.on(t, env, eventual.Config{})
	if err := ip.raise(ctx, o); err != nil {
		t.Fatal(err)
	}
	var otherErr error
	before := &patterntest.Before{Match: patterntest.Writes, Fn: func() {
		_, otherErr = o.Relay(ctx)
	}}
	_, first := ip.on(t, env.With(before), eventual.Config{})
	if sent, err := first.Relay(ctx); sent != 0 || err != nil {
		t.Errorf("the Relay that lost the count: %d, %v; want nothing run, no error", sent, err)
	}
	if !before.Ran() {
		t.Fatal("the other Relay did not run before the count")
	}
	if !errors.Is(otherErr, injected) {
		t.Errorf("the Relay that won the count: %v, want the handler's error", otherErr)
	}
	if got := ip.dequeueCounts(); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("DequeueCounts %v, want 1 2: run 2 once", got)
	}
	in := ip.raw(t)[eventual.OutboxPrefix+ip.deliveries[0].ID]
	if runs, ok := entity.Prop[int32](&in, "Runs"); !ok || runs != 2 {
		t.Errorf("the intent's Runs %v, want 2", in.Properties["Runs"])
	}
	if _, err := o.Relay(ctx); !errors.Is(err, injected) {
		t.Errorf("the next Relay: %v", err)
	}
	if got := ip.dequeueCounts(); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("DequeueCounts %v, want 1 2 3", got)
	}
}

// afterFirstWrite is a pipeline policy that calls fn once the first
// request that is not a read has been answered.
type afterFirstWrite struct {
	once sync.Once
	fn   func()
}

func (a *afterFirstWrite) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if req.Raw().Method != http.MethodGet {
		a.once.Do(a.fn)
	}
	return resp, err
}

// TestInlineRelayCutAfterCountingSkipsOne: the handler's run in Submit
// fails (injected, once); a Relay is stopped (its context cancelled)
// right after the service answered its count of run 2, before the
// handler: it returns the context's error and runs nothing, the intent
// keeps Runs 2. The next Relay runs the handler as DequeueCount 3 — the
// cut run counts — and finishes: the raise counted once, no intent left.
func TestInlineRelayCutAfterCountingSkipsOne(t *testing.T) {
	t.Parallel()
	ip := newInlinePayroll(t)
	ip.seed(t)
	ip.fail = failing(1, errors.New("injected: fails once"))
	_, o := ip.on(t, env, eventual.Config{})
	if err := ip.raise(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, cut := ip.on(t, env.With(&afterFirstWrite{fn: cancel}), eventual.Config{})
	if sent, err := cut.Relay(ctx); sent != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("the cut Relay: %d, %v; want the context's error", sent, err)
	}
	if got := ip.dequeueCounts(); !slices.Equal(got, []int64{1}) {
		t.Fatalf("DequeueCounts %v: the cut Relay ran the handler", got)
	}
	in := ip.raw(t)[eventual.OutboxPrefix+ip.deliveries[0].ID]
	if runs, ok := entity.Prop[int32](&in, "Runs"); !ok || runs != 2 {
		t.Errorf("the intent's Runs %v, want 2", in.Properties["Runs"])
	}
	if sent, err := o.Relay(context.Background()); sent != 1 || err != nil {
		t.Fatalf("the next Relay: %d, %v", sent, err)
	}
	if got := ip.dequeueCounts(); !slices.Equal(got, []int64{1, 3}) {
		t.Errorf("DequeueCounts %v, want 1 3", got)
	}
	if n, rks := ip.counted(t); n != 1 || len(rks) != 1 {
		t.Errorf("%d counted, partition %v; want 1 and no intent", n, rks)
	}
}

// TestInlineCutLastRunIsSetAside: MaxDeliveries 2; Submit's run fails
// (injected, always), a Relay is stopped right after the service
// answered its count of run 2, before the handler. The next Relay does
// not run the handler a third time: it sets the intent aside (ErrPoisoned,
// Outcome Poison with ReasonOverdelivered and no error: the cut run's is
// not known), with Runs 2 and a Reason starting with ReasonOverdelivered.
func TestInlineCutLastRunIsSetAside(t *testing.T) {
	t.Parallel()
	ip := newInlinePayroll(t)
	ip.seed(t)
	ip.fail = failing(-1, errors.New("injected: always fails"))
	rec := newOutcomes()
	cfg := eventual.Config{MaxDeliveries: 2, Hooks: rec.hooks()}
	_, o := ip.on(t, env, cfg)
	if err := ip.raise(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, cut := ip.on(t, env.With(&afterFirstWrite{fn: cancel}), cfg)
	if _, err := cut.Relay(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("the cut Relay: %v", err)
	}
	var re *eventual.RelayError
	if sent, err := o.Relay(context.Background()); sent != 0 || !errors.As(err, &re) || !re.Poisoned || !errors.Is(err, eventual.ErrPoisoned) {
		t.Fatalf("the Relay after the cut last run: %d, %v; want it set aside", sent, err)
	}
	if got := ip.dequeueCounts(); !slices.Equal(got, []int64{1}) {
		t.Errorf("DequeueCounts %v, want 1: no run after the cut one", got)
	}
	outs := rec.list()
	if last := outs[len(outs)-1]; len(outs) != 2 || last.Result != eventual.Poison || last.Reason != eventual.ReasonOverdelivered || last.Err != nil || last.DequeueCount != 3 {
		t.Errorf("outcomes %+v, want Retry then Poison (%s, no error, DequeueCount 3)", outs, eventual.ReasonOverdelivered)
	}
	dead := ip.raw(t)[eventual.UnsendablePrefix+ip.deliveries[0].ID]
	reason, _ := entity.Prop[string](&dead, "Reason")
	if runs, _ := entity.Prop[int32](&dead, "Runs"); runs != 2 || !strings.HasPrefix(reason, eventual.ReasonOverdelivered) {
		t.Errorf("set-aside row: Runs %v, Reason %q", dead.Properties["Runs"], reason)
	}
}

// TestInlineMaxDeliveriesOneSetsAsideInSubmit: with MaxDeliveries 1 the
// run in Submit is the last: its failure (injected) sets the intent
// aside at once. Submit still returns nil (the change committed) and
// reports the *RelayError matching ErrPoisoned to Hooks.Error and Result
// Poison to Hooks.Outcome; no intent is left for Relay.
func TestInlineMaxDeliveriesOneSetsAsideInSubmit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ip := newInlinePayroll(t)
	ip.seed(t)
	injected := errors.New("injected: fails")
	ip.fail = failing(-1, injected)
	rec := newOutcomes()
	_, o := ip.on(t, env, eventual.Config{MaxDeliveries: 1, Hooks: rec.hooks()})
	if err := ip.raise(ctx, o); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if errs := rec.errors(); len(errs) != 1 || !errors.Is(errs[0], eventual.ErrPoisoned) || !errors.Is(errs[0], injected) {
		t.Errorf("Hooks.Error got %v, want the intent set aside with the handler's error", errs)
	}
	if outs := rec.list(); len(outs) != 1 || outs[0].Result != eventual.Poison || outs[0].Reason != eventual.ReasonFailed {
		t.Errorf("outcomes %+v, want one Poison", outs)
	}
	rows := ip.raw(t)
	id := ip.deliveries[0].ID
	if _, ok := rows[eventual.UnsendablePrefix+id]; !ok || len(rows) != 2 {
		t.Errorf("rows %v, want the employee and the set-aside row", slices.Sorted(maps.Keys(rows)))
	}
	if sent, err := o.Relay(ctx); sent != 0 || err != nil {
		t.Errorf("Relay: %d, %v", sent, err)
	}
}
