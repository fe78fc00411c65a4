package indextest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/drift"
)

// An unwritable case is an order whose entry or list may never be
// written, and the write that makes it: an Insert, or a Modify of an
// order inserted before.
type unwritable struct {
	name string
	// order is the order to write; small, when set, is the order a
	// Modify changes into it.
	order func(t testing.TB) *entity.DynamicEntity
	small bool
}

// manyProperties is an order of 251 properties, the most a primary
// written with a write token holds: an entry copying them all and the
// primary's keys holds 253.
func manyProperties(t testing.TB) *entity.DynamicEntity {
	o := Order(PK(0), 1, "pending")
	for i := 0; len(o.Properties) < 251; i++ {
		o.Properties[fmt.Sprintf("P%03d", i)] = "x"
	}
	return o
}

// tokenRoom is a write token chain of the longest kind (TkWrite: a root
// and 16 tokens).
var tokenRoom = strings.Repeat("A", 134)

// nearLimit is an order with keys of 200 characters whose size, with a
// write token, is within a few bytes of the 1 MiB an entity may have: an
// entry holding a copy of it, its keys and a longer RowKey is over.
func nearLimit(t testing.TB) *entity.DynamicEntity {
	o := Order("c"+strings.Repeat("x", 199), 1, "pending")
	o.RowKey = "order_" + strings.Repeat("y", 194)
	fits := func(n int) bool {
		for i := 0; i < 20; i++ {
			o.Properties[fmt.Sprintf("Pad%02d", i)] = strings.Repeat("p", min(n, 32000))
			n -= min(n, 32000)
		}
		o.Properties["TkWrite"] = tokenRoom
		defer delete(o.Properties, "TkWrite")
		return entity.Validate(o) == nil
	}
	lo, hi := 0, 20*32000 // characters of padding: fits(lo), !fits(hi)
	if !fits(lo) || fits(hi) {
		t.Fatal("nearLimit: no padding makes the order just fit")
	}
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	fits(lo)
	return o
}

// longPartition is an order whose PartitionKey, 1,020 characters, leaves
// no room for an OtherPartition entry's "status_" before it.
func longPartition(t testing.TB) *entity.DynamicEntity {
	return Order("c"+strings.Repeat("x", 1019), 1, "pending")
}

// longValue is an order whose value, 1,010 characters, makes no
// non-unique entry's RowKey (the value, then the primary's keys).
func longValue(t testing.TB) *entity.DynamicEntity {
	return Order(PK(0), 1, strings.Repeat("v", 1010))
}

var unwritables = []unwritable{
	{"251 properties", manyProperties, false},
	{"Modify to 251 properties", manyProperties, true},
	{"near 1 MiB", nearLimit, false},
	{"Modify to near 1 MiB", nearLimit, true},
	{"long PartitionKey", longPartition, false},
	{"long value", longValue, false},
}

// Unwritable runs, for every layout of each placement the package has
// (unique or not, all properties copied), each write of an order whose
// index entry or list may never be written (251 properties, an entity of
// nearly 1 MiB, keys or values too long for the entry's keys), as a
// subtest: the write is refused before anything is stored (an error
// matching entity.ErrInvalid; the tables, read raw, hold nothing of it,
// or the order as it was before a refused Modify), or it converges: the
// queue drains with no message poisoned, Check finds nothing, and the
// order is listed under its value.
func Unwritable(t *testing.T, a Adapter) {
	for _, p := range a.Placements {
		for _, unique := range []bool{false, true} {
			l := Layout{Placement: p, Unique: unique, Buckets: 4}
			if p != Wide {
				l.Buckets = 0
			}
			if !a.has(l) {
				continue
			}
			for _, c := range unwritables {
				t.Run(l.String()+"/"+c.name, func(t *testing.T) {
					t.Parallel()
					unwritableOne(t, &a, l, c)
				})
			}
		}
	}
}

func unwritableOne(t *testing.T, a *Adapter, l Layout, c unwritable) {
	ctx := context.Background()
	st := a.NewStore(t)
	p := Processor(t, a.Env)
	s := a.Open(t, a.Env, st, l, p)
	o := c.order(t)
	var err error
	before := map[string]any{}
	if c.small {
		small := Order(o.PartitionKey, 1, "pending")
		small.RowKey = o.RowKey
		if err = s.Insert(ctx, small); err == nil {
			Drain(t, p)
			before = Contents(t, a.Env, st)
			err = s.Modify(ctx, o.PartitionKey, o.RowKey, func(e *entity.DynamicEntity) error {
				e.Properties = o.Properties
				return nil
			})
		}
	} else {
		err = s.Insert(ctx, o)
	}
	if err != nil {
		if !errors.Is(err, entity.ErrInvalid) {
			t.Fatalf("refused with %v, which does not match entity.ErrInvalid", err)
		}
		t.Logf("refused: %.300v", err)
		if rep, err := p.Drain(ctx); err != nil || rep.Done+rep.Retried+rep.Poisoned+rep.InPoison != 0 {
			t.Errorf("after the refusal: %+v, %v; want no message", rep, err)
		}
		SameContents(t, Contents(t, a.Env, st), before)
		if n := internal(t, st); n != 0 {
			t.Errorf("%d outbox intents or markers left", n)
		}
		return
	}
	Drain(t, p)
	NoDrift(t, "after the write", s)
	v, _ := Status(o)
	pk := o.PartitionKey
	if l.Placement == Wide {
		pk = ""
	}
	got, err := s.Listed(ctx, pk, v)
	if want := []drift.Key{{PartitionKey: o.PartitionKey, RowKey: o.RowKey}}; err != nil || len(got) != 1 || got[0] != want[0] {
		t.Errorf("listed %v, %v; want %v", got, err, want)
	}
}

// internal counts tablekit's own entities in st's primaries' table
// (outbox intents, Once markers).
func internal(t testing.TB, st Store) int {
	t.Helper()
	n := 0
	for d, err := range st.Primaries.Query(context.Background(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(d.RowKey, "tablekit.") {
			n++
		}
	}
	return n
}
