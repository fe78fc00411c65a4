package patterntest

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
)

// ModifyFunc is a pattern's Modify (Set.Modify, Copies.ModifySource, …)
// of one Set or Copies.
type ModifyFunc[T any] func(ctx context.Context, pk, rk string, change func(*T) error, opts entity.ModifyOptions) (T, error)

// ModifyAdapter is what ModifySuite needs of a pattern whose Modify
// writes an entity together with data derived from it (index entries,
// lists, copies), over a store S (its tables).
type ModifyAdapter[T, S any] struct {
	// Env is the package's Azurite (its TestMain's).
	Env *integration.Env
	// Setup makes a fresh store and writes the record PK/RK through the
	// pattern, with Value 0 (see Name).
	Setup func(t testing.TB) S
	// Open returns the Modify of a new instance of the pattern over store
	// whose clients are made from e (to meter requests or lose replies),
	// with Config.Retry r.
	Open   func(t testing.TB, e *integration.Env, store S, r entity.RetryPolicy) ModifyFunc[T]
	PK, RK string
	// Bump is another writer's change of the record, of a property the
	// derived data does not depend on; Bumps counts the bumps between
	// two versions.
	Bump  func(e *T)
	Bumps func(before, after *T) int
	// SetValue gives the record Name(i) in the property the derived data
	// depends on; Value reads it.
	SetValue func(e *T, i int)
	Value    func(e *T) string
	Name     func(i int) string
	// Stored reads the record as stored.
	Stored func(t testing.TB, store S) T
	ETag   func(e *T) string
	// IsModeError reports the pattern's error for a Modify refused for its
	// update mode (a *ModeError matching entity.ErrInvalid).
	IsModeError func(err error, mode entity.UpdateMode) bool
	// Derived checks that the derived data agrees with the stored record,
	// whose value is value: it names the record under value, and nothing
	// else drifts.
	Derived func(t testing.TB, store S, value string)
}

// ModifySuite runs the tests every Modify of the pattern packages must
// pass, as subtests: Mode (the primary is written whole: Merge and
// unknown modes refused before any request and before the change runs;
// 0 and Replace accepted), Retry (opts.Retry bounds the rounds lost to
// another writer, its zero value meaning Config.Retry; a refused change
// leaves no derived data) and LostReply (a Modify whose transaction's
// reply is lost is applied once and reported applied).
func ModifySuite[T, S any](t *testing.T, a ModifyAdapter[T, S]) {
	t.Run("Mode", func(t *testing.T) { t.Parallel(); modifyMode(t, a) })
	t.Run("Retry", func(t *testing.T) { t.Parallel(); modifyRetry(t, a) })
	t.Run("LostReply", func(t *testing.T) { t.Parallel(); modifyLostReply(t, a) })
}

func modifyMode[T, S any](t *testing.T, a ModifyAdapter[T, S]) {
	ctx := context.Background()
	env := a.Env
	meter := cost.NewMeter()
	store := a.Setup(t)
	modify := a.Open(t, env.With(meter.Policy()), store, entity.RetryPolicy{})
	for _, mode := range []entity.UpdateMode{entity.Merge, 7} {
		before := meter.Snapshot()
		called := false
		_, err := modify(ctx, a.PK, a.RK, func(e *T) error { called = true; a.SetValue(e, 1); return nil }, entity.ModifyOptions{Mode: mode})
		if !a.IsModeError(err, mode) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("mode %d: %v, want a *ModeError matching entity.ErrInvalid", mode, err)
		}
		if n := meter.Snapshot().Sub(before).Total(); n != 0 || called {
			t.Errorf("mode %d: %d requests sent, change called: %v; want none", mode, n, called)
		}
	}
	for i, mode := range []entity.UpdateMode{0, entity.Replace} {
		got, err := modify(ctx, a.PK, a.RK, func(e *T) error { a.SetValue(e, i+2); a.Bump(e); return nil }, entity.ModifyOptions{Mode: mode})
		if err != nil {
			t.Fatalf("mode %d: %v", mode, err)
		}
		stored := a.Stored(t, store)
		if a.Value(&got) != a.Name(i+2) || a.Value(&stored) != a.Name(i+2) {
			t.Errorf("mode %d wrote %+v, stored %+v; want value %q", mode, got, stored, a.Name(i+2))
		}
		a.Derived(t, store, a.Name(i+2))
	}
	if stored := a.Stored(t, store); a.Bumps(new(T), &stored) != 2 {
		t.Errorf("%d changes applied, want 2: %+v", a.Bumps(new(T), &stored), stored)
	}
}

func modifyRetry[T, S any](t *testing.T, a ModifyAdapter[T, S]) {
	ctx := context.Background()
	env := a.Env
	store := a.Setup(t)
	other := a.Open(t, env, store, entity.RetryPolicy{})
	// raced returns a change that sets the value to name, after another
	// writer bumped the record the first `races` times it is called.
	raced := func(races int, i int, calls *int) func(*T) error {
		return func(e *T) error {
			*calls++
			if *calls <= races {
				if _, err := other(ctx, a.PK, a.RK, func(e *T) error { a.Bump(e); return nil }, entity.ModifyOptions{}); err != nil {
					return err
				}
			}
			a.SetValue(e, i)
			return nil
		}
	}
	defaults := a.Open(t, env, store, entity.RetryPolicy{})
	once := a.Open(t, env, store, entity.RetryPolicy{Attempts: 1})
	cases := []struct {
		name   string
		modify ModifyFunc[T]
		opts   entity.ModifyOptions
		races  int
		fails  bool
	}{
		{"opts.Retry.Attempts=1 overrides Config's default", defaults, entity.ModifyOptions{Retry: entity.RetryPolicy{Attempts: 1}}, 1, true},
		{"zero opts.Retry means Config's default (10 rounds)", defaults, entity.ModifyOptions{}, 3, false},
		{"zero opts.Retry means Config.Retry.Attempts=1", once, entity.ModifyOptions{}, 1, true},
		{"opts.Retry.Attempts=3 overrides Config.Retry.Attempts=1", once, entity.ModifyOptions{Retry: entity.RetryPolicy{Attempts: 3}}, 2, false},
	}
	for i, c := range cases {
		before := a.Stored(t, store)
		calls := 0
		got, err := c.modify(ctx, a.PK, a.RK, raced(c.races, i+1, &calls), c.opts)
		after := a.Stored(t, store)
		if n := a.Bumps(&before, &after); n != c.races {
			t.Errorf("%s: %d changes of the other writer stored, want %d", c.name, n, c.races)
		}
		if c.fails {
			if !errors.Is(err, entity.ErrContention) {
				t.Errorf("%s: %v, want entity.ErrContention", c.name, err)
			}
			if calls != 1 || a.Value(&after) != a.Value(&before) {
				t.Errorf("%s: %d rounds, value %q; want 1 round and the value kept", c.name, calls, a.Value(&after))
			}
			a.Derived(t, store, a.Value(&after)) // the refused value has no derived data
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if calls != c.races+1 || a.Value(&got) != a.Name(i+1) || a.Value(&after) != a.Name(i+1) || a.ETag(&got) != a.ETag(&after) {
			t.Errorf("%s: %d rounds, got %+v, stored %+v; want %d rounds and value %q", c.name, calls, got, after, c.races+1, a.Name(i+1))
		}
	}
	// The refused changes left nothing behind: only the last value's.
	a.Derived(t, store, a.Name(len(cases)))
}

// isTableWrite matches a table service's POST: a transaction, an insert.
func isTableWrite(r *http.Request) bool {
	return r.Method == http.MethodPost && !strings.Contains(r.URL.Path, "/Tables")
}

func modifyLostReply[T, S any](t *testing.T, a ModifyAdapter[T, S]) {
	ctx := context.Background()
	env := a.Env
	store := a.Setup(t)
	f := faults.New(faults.Config{})
	modify := a.Open(t, Faulty(env, f), store, entity.RetryPolicy{})
	for i := 1; i <= 3; i++ {
		f.LoseNext(1, isTableWrite)
		got, err := modify(ctx, a.PK, a.RK, func(e *T) error { a.Bump(e); a.SetValue(e, i); return nil }, entity.ModifyOptions{})
		if err != nil {
			t.Fatalf("Modify %d whose reply was lost: %v", i, err)
		}
		if a.Value(&got) != a.Name(i) {
			t.Errorf("Modify %d returned %+v, want value %q", i, got, a.Name(i))
		}
	}
	if st := f.Stats(); st.LostReplies != 3 {
		t.Errorf("%d replies lost, want 3", st.LostReplies)
	}
	stored := a.Stored(t, store)
	if n := a.Bumps(new(T), &stored); n != 3 || a.Value(&stored) != a.Name(3) {
		t.Errorf("stored %+v: %d changes applied, want 3 and value %q", stored, n, a.Name(3))
	}
	a.Derived(t, store, a.Name(3))
}

// ValueName is a ModifyAdapter.Name: "Name0", "Name1", ….
func ValueName(i int) string { return "Name" + strconv.Itoa(i) }

// MoveAdapter is what MoveLostDelete needs of a Set with MoveTo, over a
// store S (its tables).
type MoveAdapter[T, S any] struct {
	// Env is the package's Azurite (its TestMain's).
	Env *integration.Env
	// Setup makes a fresh store and writes the record PK/RK through the
	// pattern, with the value "Orig".
	Setup func(t testing.TB) S
	// Open returns the MoveTo of a new instance of the pattern over store
	// whose clients are made from e.
	Open   func(t testing.TB, e *integration.Env, store S) func(ctx context.Context, pk, rk string, dst *entity.Table[T]) error
	PK, RK string
	// Insert writes the record again with value, through another
	// instance of the pattern over plain clients.
	Insert func(t testing.TB, store S, value string) error
	// Raw reads the record's value in the table named table with a raw
	// client; found is false when it is not there.
	Raw func(t testing.TB, table, pk, rk string) (value string, found bool)
	// Primaries is the name of the store's primaries' table.
	Primaries func(store S) string
	// Derived checks that the store holds no derived data of the record
	// and nothing drifts.
	Derived func(t testing.TB, store S)
}

// MoveLostDelete: MoveTo's delete has its reply lost, and inside azcore's
// retry window another writer inserts the record again (value "Theirs").
// The resend is refused, and the Set's delete cannot tell its outcome
// (entity.ErrOutcomeUnknown); MoveTo reads again, copies the version
// there and deletes it: the move ends done, the archive holds the latest
// version and the primaries' table neither (read with a raw client), and
// no derived data is left.
func MoveLostDelete[T, S any](t *testing.T, a MoveAdapter[T, S]) {
	ctx := context.Background()
	store := a.Setup(t)
	f := faults.New(faults.Config{})
	move := a.Open(t, Faulty(a.Env, f), store)
	archive := Table[T](t, a.Env)
	var theirs error
	f.LoseNextThen(1, isTableWrite, func(*http.Request) { theirs = a.Insert(t, store, "Theirs") })
	if err := move(ctx, a.PK, a.RK, archive); err != nil {
		t.Fatalf("MoveTo whose delete's reply was lost: %v", err)
	}
	if theirs != nil {
		t.Fatalf("the other writer's insert: %v", theirs)
	}
	if st := f.Stats(); st.LostReplies != 1 {
		t.Fatalf("faults %+v, want one lost reply", st)
	}
	if v, found := a.Raw(t, a.Primaries(store), a.PK, a.RK); found {
		t.Errorf("still in the primaries' table: %q", v)
	}
	if v, found := a.Raw(t, archive.Name(), a.PK, a.RK); !found || v != "Theirs" {
		t.Errorf("archived %q (found %v), want the latest version (Theirs)", v, found)
	}
	a.Derived(t, store)
}
