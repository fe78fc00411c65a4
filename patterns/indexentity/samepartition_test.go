package indexentity_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// newLocal returns a Set of a new table with a SamePartition index of
// last names.
func newLocal(t testing.TB, cfg indexentity.Config) (*indexentity.Set[Employee], *entity.Table[Employee]) {
	t.Helper()
	emps := patterntest.Table[Employee](t, env)
	s, err := indexentity.New(emps, cfg, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	return s, emps
}

// TestGuideExample runs the guide's §6.4 option 2 story: employees of
// Sales, an index entity per last name in their partition, "all
// employees named Jones" as one index read and point reads, and a rename
// that changes three entities in one transaction.
func TestGuideExample(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The service's answers, not azcore's tries: a retry of a request
	// that never reached the service is no request of the design.
	answered := &patterntest.Answered{}
	metered := env.With(answered)
	emps := patterntest.Table[Employee](t, metered)
	s, err := indexentity.New(emps, indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Employee{
		{PartitionKey: "Sales", RowKey: "000152", FirstName: "Don", LastName: "Jones"},
		{PartitionKey: "Sales", RowKey: "000123", FirstName: "Jun", LastName: "Jones"},
		{PartitionKey: "Sales", RowKey: "000140", FirstName: "Ken", LastName: "Smith"},
		{PartitionKey: "Marketing", RowKey: "000111", FirstName: "Ann", LastName: "Jones"},
	} {
		answered.Reset()
		if err := s.Insert(ctx, &e); err != nil {
			t.Fatal(err)
		}
		if e.ETag == "" {
			t.Errorf("%s: no ETag written back", e.RowKey)
		}
		// One read of the index entity, one transaction.
		if n, b := answered.Total(), answered.Count(cost.Table, cost.OpBatch); n != 2 || b != 1 {
			t.Errorf("insert of %s made %d requests, %d transactions; want a read and one transaction", e.RowKey, n, b)
		}
	}
	if got := lookup(t, s, "lastname", "Sales", "Jones"); !slices.Equal(got, []string{"000123", "000152"}) {
		t.Errorf("Jones in Sales: %v", got)
	}
	// The index entity is the guide's: PartitionKey Sales, RowKey for
	// Jones, the employee ids in one property.
	bags := patterntest.View[entity.DynamicEntity](t, env, emps)
	ixe, err := bags.Get(ctx, "Sales", "lastname_Jones")
	if err != nil {
		t.Fatal(err)
	}
	if got := ixe.Properties[indexentity.PropMembers]; got != "000123\n000152\n" {
		t.Errorf("Members = %q", got)
	}

	// The rename: three entities in one transaction.
	answered.Reset()
	e, err := s.Modify(ctx, "Sales", "000152", func(e *Employee) error { e.LastName = "Smith"; return nil }, entity.ModifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b := answered.Count(cost.Table, cost.OpBatch); b != 1 {
		t.Errorf("rename made %d transactions, want one", b)
	}
	if e.LastName != "Smith" || e.ETag == "" {
		t.Errorf("Modify returned %+v", e)
	}
	if got := lookup(t, s, "lastname", "Sales", "Jones"); !slices.Equal(got, []string{"000123"}) {
		t.Errorf("Jones after the rename: %v", got)
	}
	if got := lookup(t, s, "lastname", "Sales", "Smith"); !slices.Equal(got, []string{"000140", "000152"}) {
		t.Errorf("Smith after the rename: %v", got)
	}
	// Update with a stale ETag is refused; with the current one it works.
	stale := e
	e.FirstName = "Donald"
	if err := s.Update(ctx, &e); err != nil {
		t.Fatal(err)
	}
	stale.LastName = "Brown"
	if err := s.Update(ctx, &stale); !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Errorf("stale update: %v", err)
	}
	// The last Jones of Sales goes: the index entity goes with it.
	if err := s.Delete(ctx, "Sales", "000123", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := bags.Get(ctx, "Sales", "lastname_Jones"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("the empty index entity is still there: %v", err)
	}
	if err := s.Delete(ctx, "Sales", "000123", ""); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if got := lookup(t, s, "lastname", "Marketing", "Jones"); !slices.Equal(got, []string{"000111"}) {
		t.Errorf("Jones in Marketing: %v", got)
	}
	noDrift(t, s)
}

// TestSpill fills one value's list past the entity limit, with two
// writers at once: the list spills to continuation entities, which split
// as they fill and go when they empty, and lookups and checks see one
// list in key order.
func TestSpill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Two writers of one list: every round has one winner.
	s, emps := newLocal(t, indexentity.Config{MaxEntityBytes: 8 << 10, Retry: hot})
	bags := patterntest.View[entity.DynamicEntity](t, env, emps)
	const n = 200 // about 25 KiB of ids: five or so entities of 8 KiB
	var want []string
	es := make([]Employee, n)
	for i := range es {
		j := (i * 7919) % n // not in key order
		es[i] = Employee{PartitionKey: "Sales", RowKey: keys.Pad(int64(j), 60), LastName: "Jones"}
		if j%10 == 0 {
			es[i].LastName = "Smith"
		} else {
			want = append(want, es[i].RowKey)
		}
	}
	patterntest.Parallel(t, 2, len(es), func(i int) error { return s.Insert(ctx, &es[i]) })
	slices.Sort(want)
	got, err := s.Members(ctx, "lastname", "Sales", "Jones")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Members: %d, want %d", len(got), len(want))
	}
	rows := indexRows(t, bags, "Sales", "lastname_Jones")
	if len(rows) < 4 {
		t.Errorf("the list is in %d entities, want it spilled", len(rows))
	}
	for _, r := range rows {
		if sz := size(r); sz > 8<<10 {
			t.Errorf("%s is %d bytes", r.RowKey, sz)
		}
	}
	if got := lookup(t, s, "lastname", "Sales", "Jones"); !slices.Equal(got, want) {
		t.Errorf("lookup: %d, want %d", len(got), len(want))
	}
	noDrift(t, s)
	// Empty it: the continuations go as they empty, and the head last.
	patterntest.Parallel(t, 2, len(want), func(i int) error { return s.Delete(ctx, "Sales", want[i], "") })
	if rows := indexRows(t, bags, "Sales", "lastname_Jones"); len(rows) != 0 {
		t.Errorf("%d index entities left for an empty list", len(rows))
	}
	noDrift(t, s)
}

// TestSpillBesideSplits: a writer reads a spilled list's directory, then
// — before it reads the continuation that holds its member — another
// writer splits that continuation, moving the member's part of its range
// to a new one. The first writer must not add its member to the
// narrowed continuation (a member outside its entity's range, which
// Members refuses as corrupt): it reads the directory again, finds it
// changed, and starts again. The list is exact and Check finds no drift.
func TestSpillBesideSplits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := indexentity.Config{MaxEntityBytes: 8 << 10, Retry: hot}
	s, emps := newLocal(t, cfg)
	bags := patterntest.View[entity.DynamicEntity](t, env, emps)
	member := func(j int) string { return keys.Pad(int64(j), 60) }
	var want []string
	held := map[int]bool{}
	insert := func(s *indexentity.Set[Employee], j int) {
		t.Helper()
		if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: member(j), LastName: "Jones"}); err != nil {
			t.Fatal(err)
		}
		want, held[j] = append(want, member(j)), true
	}
	// Tens, until the list has spilled into two continuations: the gaps
	// leave room to fill a continuation below any member.
	for j := 0; len(directory(t, bags)) < 2; j += 10 {
		insert(s, j)
	}
	// m is the last number of the first continuation's range.
	bound, err := strconv.Atoi(directory(t, bags)[1])
	if err != nil {
		t.Fatal(err)
	}
	m := bound - 1
	// splitAt fills the continuation whose range holds m from its lower
	// bound until it splits: m's part of its range goes to a new one.
	splitAt := func() {
		bounds := directory(t, bags)
		low := 0
		for _, b := range bounds[1:] {
			if j, _ := strconv.Atoi(b); j <= m {
				low = j
			}
		}
		for j := low; j < m; j++ {
			if !held[j] {
				insert(s, j)
				if len(directory(t, bags)) > len(bounds) {
					return
				}
			}
		}
		t.Fatalf("the continuation of %d did not split", m)
	}
	// late is a Set whose n-th index entity read (the continuation, after
	// the directory) waits for splitAt.
	late := func() (*indexentity.Set[Employee], *patterntest.Before) {
		gate := &patterntest.Before{N: 2, Fn: splitAt, Match: func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "lastname_Jones")
		}}
		ls, err := indexentity.New(patterntest.View[Employee](t, env.With(gate), emps), cfg, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
		if err != nil {
			t.Fatal(err)
		}
		return ls, gate
	}
	check := func(step string, gate *patterntest.Before) {
		t.Helper()
		if !gate.Ran() {
			t.Fatalf("%s: the split never ran between the index entity reads", step)
		}
		slices.SortFunc(want, keys.Compare)
		got, err := s.Members(ctx, "lastname", "Sales", "Jones")
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: Members: %d, want %d", step, len(got), len(want))
		}
		noDrift(t, s)
	}
	// An insert of m beside the split of its continuation.
	ls, gate := late()
	insert(ls, m)
	check("insert", gate)
	// A delete of m beside the next split of its continuation.
	ls, gate = late()
	if err := ls.Delete(ctx, "Sales", member(m), ""); err != nil {
		t.Fatal(err)
	}
	want = slices.DeleteFunc(want, func(w string) bool { return w == member(m) })
	check("delete", gate)
}

// directory returns the lower bounds of the continuations of the Jones
// list in Sales, as its first entity's directory lists them ("" first);
// nil while the list has not spilled.
func directory(t *testing.T, bags *entity.Table[entity.DynamicEntity]) []string {
	t.Helper()
	head, err := bags.Get(context.Background(), "Sales", "lastname_Jones")
	if errors.Is(err, entity.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	text, _ := head.Properties[indexentity.PropChunks].(string)
	var bounds []string
	for line := range strings.Lines(text) {
		_, from, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		bounds = append(bounds, from)
	}
	return bounds
}

// indexRows lists the index entities of one value.
func indexRows(t testing.TB, bags *entity.Table[entity.DynamicEntity], pk, head string) []entity.DynamicEntity {
	t.Helper()
	var out []entity.DynamicEntity
	for e, err := range bags.Query(context.Background(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.PartitionKey == pk && (e.RowKey == head || strings.HasPrefix(e.RowKey, head+" ")) {
			out = append(out, e)
		}
	}
	return out
}

// size is an entity's size by the service's formula.
func size(e entity.DynamicEntity) int {
	n := 4 + 2*(len(e.PartitionKey)+len(e.RowKey))
	for k, v := range e.Properties {
		n += 8 + 2*len(k)
		if s, ok := v.(string); ok {
			n += 4 + 2*len(s)
		} else {
			n += 8
		}
	}
	return n
}

// TestValidation refuses bad declarations, keys and values before any
// request.
func TestValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emps := patterntest.Table[Employee](t, env)
	for i, c := range []struct {
		cfg indexentity.Config
		ixs []indexentity.Index[Employee]
	}{
		{indexentity.Config{}, nil},
		{indexentity.Config{}, []indexentity.Index[Employee]{{Name: "last_name", Value: lastName}}},
		{indexentity.Config{}, []indexentity.Index[Employee]{{Name: "lastname"}}},
		{indexentity.Config{}, []indexentity.Index[Employee]{{Name: "a", Value: lastName}, {Name: "a", Value: city}}},
		{indexentity.Config{}, []indexentity.Index[Employee]{{Name: "a", Value: lastName, Placement: indexentity.Blob}}},
		{indexentity.Config{}, []indexentity.Index[Employee]{{Name: "a", Value: lastName, Placement: indexentity.OtherPartition}}},
		{indexentity.Config{MaxEntityBytes: 100}, []indexentity.Index[Employee]{{Name: "a", Value: lastName}}},
		{indexentity.Config{PrimaryPrefix: "a_x"}, []indexentity.Index[Employee]{{Name: "a", Value: lastName}}},
	} {
		if _, err := indexentity.New(emps, c.cfg, c.ixs...); !errors.Is(err, indexentity.ErrInvalidConfig) {
			t.Errorf("case %d: %v", i, err)
		}
	}
	s, err := indexentity.New(emps, indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Employee{
		{PartitionKey: "Sales", RowKey: "1", LastName: "a/b"},
		{PartitionKey: "Sales", RowKey: "lastname_1", LastName: "Jones"},
		{PartitionKey: "Sales", RowKey: "tablekit.x", LastName: "Jones"},
		{PartitionKey: "Sales", RowKey: "1", LastName: strings.Repeat("x", 600)},
	} {
		if err := s.Insert(ctx, &e); !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("insert %s/%q: %v", e.RowKey, shortened(e.LastName), err)
		}
	}
	if _, err := s.Members(ctx, "nosuch", "Sales", "Jones"); !errors.Is(err, indexentity.ErrUnknownIndex) {
		t.Errorf("unknown index: %v", err)
	}
	if err := s.Insert(ctx, nil); !errors.Is(err, entity.ErrInvalid) || !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("nil entity: %v", err)
	}
	e := Employee{PartitionKey: "Sales", RowKey: "1", LastName: "Jones"}
	if err := s.Update(ctx, &e); !errors.Is(err, entity.ErrNoETag) ||
		!strings.HasPrefix(err.Error(), `indexentity: update of PartitionKey "Sales", RowKey "1": `) || !strings.Contains(err.Error(), "read it first (Get or LookupAll) or use Modify") {
		t.Errorf("update without ETag: %v", err)
	}
	if _, err := s.Modify(ctx, "Sales", "1", nil, entity.ModifyOptions{}); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("nil change: %v", err)
	}
	if err := s.Insert(ctx, &e); err != nil {
		t.Fatal(err)
	}
	if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "1", LastName: "Smith"}); !errors.Is(err, entity.ErrAlreadyExists) {
		t.Errorf("second insert: %v", err)
	}
	if _, err := s.Modify(ctx, "Sales", "1", func(e *Employee) error { e.RowKey = "2"; return nil }, entity.ModifyOptions{}); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("a change of keys: %v", err)
	}
	giveUp := fmt.Errorf("no")
	if _, err := s.Modify(ctx, "Sales", "1", func(e *Employee) error { return giveUp }, entity.ModifyOptions{}); !errors.Is(err, giveUp) {
		t.Errorf("change's error: %v", err)
	}
	if got := lookup(t, s, "lastname", "Sales", "Smith"); len(got) != 0 {
		t.Errorf("the refused insert is listed: %v", got)
	}
	noDrift(t, s)
}

func shortened(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}
