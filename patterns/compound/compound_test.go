package compound_test

import (
	"context"
	"errors"
	"iter"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/compound"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// Review is the guide's yearly review of an employee, stored in the
// employee's department partition.
type Review struct {
	PartitionKey  string
	RowKey        string
	ETag          string
	ManagerRating int32
	PeerRating    int32
	Comments      string
}

// Employee is the guide's employee, in the same partition.
type Employee struct {
	PartitionKey string
	RowKey       string
	Name         string
}

func guideKeys() compound.Config[int64, int64] {
	return compound.Config[int64, int64]{Prefix: "empid", Parent: compound.Int(6), Child: compound.Int(4)}
}

// TestGuideReviews is the guide's example: employees 000122, 000123 and
// 000124 of Sales with their reviews of 2011 to 2014 and their own entities
// in one partition; one range query returns exactly employee 000123's
// reviews, in year order, with the guide's $select; one point query one
// review.
func TestGuideReviews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	client := env.With(meter.Policy()).Table(t)
	reviews, err := entity.NewTable[Review](client)
	if err != nil {
		t.Fatal(err)
	}
	employees, _ := entity.NewTable[Employee](client)
	rel, err := compound.New(reviews, guideKeys())
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := rel.Key(123, 2012); k != "empid 000123 2012" {
		t.Errorf("Key(123, 2012) = %q", k)
	}
	for _, emp := range []int64{122, 123, 124} {
		pk, _ := rel.ParentKey(emp)
		b := employees.NewBatch().Insert(&Employee{PartitionKey: "Sales", RowKey: pk, Name: "employee"})
		for year := int64(2011); year <= 2014; year++ {
			r := Review{ManagerRating: int32(year - 2010), PeerRating: int32(emp - 120), Comments: "fine"}
			if err := rel.Stamp(&r, "Sales", emp, year); err != nil {
				t.Fatal(err)
			}
			b.Insert(&r)
		}
		// The employee and their reviews: one transaction.
		if _, err := employees.Submit(ctx, b); err != nil {
			t.Fatal(err)
		}
	}

	before := meter.Snapshot()
	var years []int64
	for r, err := range rel.Children(ctx, "Sales", 123, entity.Query{Select: []string{"ManagerRating", "PeerRating", "Comments"}}) {
		if err != nil {
			t.Fatal(err)
		}
		emp, year, err := rel.Parse(r.RowKey)
		if err != nil || emp != 123 {
			t.Errorf("%q parsed as %d, %d, %v", r.RowKey, emp, year, err)
		}
		if r.PeerRating != 3 || r.ManagerRating != int32(year-2010) || r.Comments != "fine" {
			t.Errorf("review %s: %+v", r.RowKey, r)
		}
		years = append(years, year)
	}
	if !slices.Equal(years, []int64{2011, 2012, 2013, 2014}) {
		t.Errorf("employee 000123's reviews: %v", years)
	}
	used := meter.Snapshot().Sub(before)
	if used.Total() != 1 || used.Count(cost.Table, cost.OpQuery) != 1 {
		t.Errorf("the reviews cost %v, want one query", used)
	}

	before = meter.Snapshot()
	r, err := rel.Get(ctx, "Sales", 123, 2012)
	if err != nil || r.RowKey != "empid 000123 2012" || r.ManagerRating != 2 {
		t.Errorf("Get: %+v, %v", r, err)
	}
	if used := meter.Snapshot().Sub(before); used.Total() != 1 || used.Count(cost.Table, cost.OpGet) != 1 {
		t.Errorf("the review cost %v, want one point query", used)
	}
	if _, err := rel.Get(ctx, "Sales", 123, 2015); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("a review that does not exist: %v", err)
	}

	years = nil
	for r, err := range rel.ChildrenBetween(ctx, "Sales", 123, 2012, 2014, entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		_, year, _ := rel.Parse(r.RowKey)
		years = append(years, year)
	}
	if !slices.Equal(years, []int64{2012, 2013}) {
		t.Errorf("reviews of 2012 up to 2014: %v", years)
	}

	// A filter narrows the range.
	n := 0
	for _, err := range rel.Children(ctx, "Sales", 124, entity.Query{Filter: filterRating(3)}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d of 000124's reviews have a manager rating of 3 or more, want 2", n)
	}

	// Bad ids: typed errors, nothing sent.
	before = meter.Snapshot()
	for _, err := range rel.Children(ctx, "Sales", -1, entity.Query{}) {
		if !errors.Is(err, keys.ErrInvalidKey) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("a negative id: %v", err)
		}
	}
	if _, err := rel.Get(ctx, "Sales", 1234567, 2012); !errors.Is(err, keys.ErrInvalidKey) {
		t.Errorf("a seven-digit id: %v", err)
	}
	badPartition := func(what string, err error) {
		t.Helper()
		var ke *compound.KeyError
		if !errors.As(err, &ke) || ke.Part != "partition" || !errors.Is(err, keys.ErrInvalidKey) || !errors.Is(err, entity.ErrInvalid) || !strings.HasPrefix(err.Error(), "compound: ") {
			t.Errorf("%s with a bad partition: %v, want a *compound.KeyError naming the partition, matching entity.ErrInvalid", what, err)
		}
	}
	first := func(seq iter.Seq2[Review, error]) error {
		for _, err := range seq {
			return err
		}
		return nil // nothing yielded: badPartition fails it
	}
	badPartition("Children", first(rel.Children(ctx, "Sa/les", 1, entity.Query{})))
	badPartition("ChildrenIn", first(rel.ChildrenIn(ctx, "a?b", 1, compound.Window[int64]{From: 2012, To: 2014}, entity.Query{})))
	badPartition("ChildrenIn of an empty window", first(rel.ChildrenIn(ctx, "a?b", 1, compound.Window[int64]{From: 2012, To: 2012}, entity.Query{})))
	var stamped Review
	badPartition("Stamp", rel.Stamp(&stamped, "a#b", 1, 2012))
	if n := meter.Snapshot().Sub(before).Total(); n != 0 {
		t.Errorf("bad ids sent %d requests", n)
	}
}

// TestRange checks the range against every neighbour of a parent's keys,
// in the service's order.
func TestRange(t *testing.T) {
	rel, err := compound.New(&entity.Table[Review]{}, guideKeys())
	if err != nil {
		t.Fatal(err)
	}
	from, to, err := rel.Range(123)
	if err != nil {
		t.Fatal(err)
	}
	if from != "empid 000123 " || to != "empid 000123!" {
		t.Errorf("Range(123) = %q, %q", from, to)
	}
	in := func(k string) bool { return keys.Compare(from, k) <= 0 && keys.Compare(k, to) < 0 }
	for k, want := range map[string]bool{
		"empid 000123 0000": true,
		"empid 000123 2012": true,
		"empid 000123 9999": true,
		"empid 000123":      false, // the employee's own entity
		"empid 000122 2012": false,
		"empid 000124 2012": false,
		"empid 0001230":     false,
		"empid 000123!x":    false,
		"empid_000123_2012": false,
	} {
		if in(k) != want {
			t.Errorf("%q in Range(123): %v, want %v", k, in(k), want)
		}
	}
}

// TestParts checks each Part's encoding: order, round trip, refusals.
func TestParts(t *testing.T) {
	t.Run("Int", func(t *testing.T) {
		rel := mustNew(t, compound.Config[int64, int64]{Parent: compound.Int(3), Child: compound.Int(2)})
		k, err := rel.Key(7, 5)
		if err != nil || k != "007 05" {
			t.Errorf("Key(7, 5) = %q, %v", k, err)
		}
		for _, bad := range []int64{-1, 1000} {
			if _, err := rel.Key(bad, 1); !errors.Is(err, keys.ErrInvalidKey) {
				t.Errorf("Key(%d, 1): %v", bad, err)
			}
		}
		for _, s := range []string{"007 5", "07 05", "007 0x", "007", "007 05 01", "+07 05", "007 -5"} {
			if _, _, err := rel.Parse(s); err == nil {
				t.Errorf("Parse(%q) accepted", s)
			}
		}
	})
	t.Run("Signed", func(t *testing.T) {
		rel := mustNew(t, compound.Config[int64, int64]{Prefix: "t", Parent: compound.Signed(), Child: compound.Signed()})
		sorted(t, rel, []int64{math.MinInt64, -5, -1, 0, 1, 42, math.MaxInt64})
	})
	t.Run("Text", func(t *testing.T) {
		rel := mustNew(t, compound.Config[string, string]{Prefix: "dept", Parent: compound.Text(), Child: compound.Text()})
		k, err := rel.Key("New York", "a!b")
		if err != nil || k != "dept New! York a!!b" {
			t.Errorf("Key = %q, %v", k, err)
		}
		p, c, err := rel.Parse(k)
		if err != nil || p != "New York" || c != "a!b" {
			t.Errorf("Parse(%q) = %q, %q, %v", k, p, c, err)
		}
		if _, err := rel.Key("a/b", "c"); !errors.Is(err, keys.ErrInvalidKey) {
			t.Errorf("a '/': %v", err)
		}
		sorted(t, rel, []string{"", "A", "A B", "AB", "a", "a b", "ab", "é"})
	})
	t.Run("Escaped", func(t *testing.T) {
		rel := mustNew(t, compound.Config[string, string]{Parent: compound.Escaped(), Child: compound.Escaped()})
		k, err := rel.Key("a/b#c", "?")
		if err != nil || keys.Validate(k) != nil {
			t.Errorf("Key = %q, %v", k, err)
		}
		p, c, err := rel.Parse(k)
		if err != nil || p != "a/b#c" || c != "?" {
			t.Errorf("Parse(%q) = %q, %q, %v", k, p, c, err)
		}
		sorted(t, rel, []string{"", "#", "/", "?", "A", "\\", "a", "a b"})
	})
	t.Run("Time", func(t *testing.T) {
		at := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
		old := mustNew(t, compound.Config[string, time.Time]{Prefix: "log", Parent: compound.Text(), Child: compound.Time()})
		recent := mustNew(t, compound.Config[string, time.Time]{Prefix: "log", Parent: compound.Text(), Child: compound.NewestFirst()})
		k1, _ := old.Key("web", at)
		k2, _ := old.Key("web", at.Add(time.Second))
		r1, _ := recent.Key("web", at)
		r2, _ := recent.Key("web", at.Add(time.Second))
		if !(k1 < k2) || !(r2 < r1) {
			t.Errorf("Time %q < %q, NewestFirst %q < %q", k1, k2, r2, r1)
		}
		if _, c, err := recent.Parse(r1); err != nil || !c.Equal(at) {
			t.Errorf("Parse(%q) = %v, %v", r1, c, err)
		}
		if _, err := old.Key("web", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Hour)); !errors.Is(err, keys.ErrInvalidKey) {
			t.Errorf("a time before year 1: %v", err)
		}
	})
	t.Run("Custom", func(t *testing.T) {
		level := compound.Custom("level", func(s string) (string, error) {
			switch s {
			case "low":
				return "1", nil
			case "high":
				return "2", nil
			}
			return "", errors.New("no such level")
		}, func(s string) (string, error) {
			switch s {
			case "1":
				return "low", nil
			case "2":
				return "high", nil
			}
			return "", errors.New("no such level")
		})
		rel := mustNew(t, compound.Config[string, string]{Parent: level, Child: compound.Text()})
		if k, err := rel.Key("high", "x"); err != nil || k != "2 x" {
			t.Errorf("Key = %q, %v", k, err)
		}
		if _, err := rel.Key("mid", "x"); err == nil {
			t.Error("an id the Custom part refuses was accepted")
		}
	})
	t.Run("Prefix", func(t *testing.T) {
		rel := mustNew(t, guideKeys())
		for _, s := range []string{"emp 000123 2012", "000123 2012", "empid 000123 2012 x", "empid!x"} {
			if _, _, err := rel.Parse(s); !errors.Is(err, keys.ErrInvalidKey) {
				t.Errorf("Parse(%q): %v", s, err)
			}
		}
	})
	for name, cfg := range map[string]compound.Config[int64, int64]{
		"zero parent": {Child: compound.Int(4)},
		"zero child":  {Parent: compound.Int(4)},
		"bad prefix":  {Prefix: "a#", Parent: compound.Int(4), Child: compound.Int(4)},
	} {
		if _, err := compound.New(&entity.Table[Review]{}, cfg); !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := compound.New[Review](nil, guideKeys()); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("a nil table: %v", err)
	}
}

func mustNew[P, C any](t *testing.T, cfg compound.Config[P, C]) *compound.Relation[Review, P, C] {
	t.Helper()
	rel, err := compound.New(&entity.Table[Review]{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// sorted checks that the keys of (a, b) for ids in increasing order sort
// as the pairs do, in the service's order, and read back.
func sorted[V comparable](t *testing.T, rel *compound.Relation[Review, V, V], ids []V) {
	t.Helper()
	var prev string
	for i, a := range ids {
		for j, b := range ids {
			k, err := rel.Key(a, b)
			if err != nil {
				t.Fatalf("Key(%v, %v): %v", a, b, err)
			}
			if i+j > 0 && keys.Compare(prev, k) >= 0 {
				t.Errorf("Key(%v, %v) = %q does not sort after %q", a, b, k, prev)
			}
			prev = k
			p, c, err := rel.Parse(k)
			if err != nil || p != a || c != b {
				t.Errorf("Parse(%q) = %v, %v, %v", k, p, c, err)
			}
		}
	}
}

func filterRating(min int32) filter.Expr { return filter.Ge("ManagerRating", min) }

// TestNil calls every method on a nil and a zero Relation: typed errors,
// no panic.
func TestNil(t *testing.T) {
	ctx := context.Background()
	for _, r := range []*compound.Relation[Review, int64, int64]{nil, {}} {
		_, err1 := r.Key(1, 2)
		_, err2 := r.ParentKey(1)
		_, _, err3 := r.Parse("x")
		_, _, err4 := r.Range(1)
		_, _, err5 := r.Between(1, 2, 3)
		_, err6 := r.Get(ctx, "a", 1, 2)
		err7 := r.Stamp(&Review{}, "a", 1, 2)
		errs := []error{err1, err2, err3, err4, err5, err6, err7}
		for _, err := range r.Children(ctx, "a", 1, entity.Query{}) {
			errs = append(errs, err)
		}
		for _, err := range r.ChildrenBetween(ctx, "a", 1, 2, 3, entity.Query{}) {
			errs = append(errs, err)
		}
		for i, err := range errs {
			if !errors.Is(err, entity.ErrInvalid) {
				t.Errorf("call %d on %#v: %v", i, r, err)
			}
		}
	}
	rel := mustNew(t, guideKeys())
	if err := rel.Stamp(nil, "a", 1, 2); err == nil {
		t.Error("Stamp of nil accepted")
	}
}
