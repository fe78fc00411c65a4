package indextest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// note is the payload of the caller's messages in TooManyMessages.
type note struct{ N int }

var noteKind = eventual.NewKind[note]("indextest.note.v1")

// TooManyMessages runs, as a subtest per placement the package has of
// Same and Other, writes carrying more of the caller's messages than
// their transaction holds: the limit is Adapter.MaxMessages less two for
// the Same layout's index. One more than the limit, and 100, are refused
// before any request with an *eventual.TooManyMessagesError naming the
// count and the limit, which matches eventual.ErrInvalidMessage and
// entity.ErrInvalid and not eventual.ErrTooLarge, and nothing is written
// (the tables read raw); exactly the limit commits, and each message is
// handled once the queue drained.
func TooManyMessages(t *testing.T, a Adapter) {
	for _, l := range []Layout{{Placement: Same}, {Placement: Other}} {
		if !a.has(l) {
			continue
		}
		t.Run(l.String(), func(t *testing.T) {
			t.Parallel()
			tooManyMessages(t, &a, l)
		})
	}
}

func tooManyMessages(t *testing.T, a *Adapter, l Layout) {
	ctx := context.Background()
	limit := a.MaxMessages
	if l.Placement == Same {
		limit -= 2
	}
	st := a.NewStore(t)
	p := Processor(t, a.Env)
	var handled atomic.Int32
	if err := eventual.Handle(p, noteKind, func(context.Context, note) error { handled.Add(1); return nil }, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	s := a.Open(t, a.Env, st, l, p)
	msgs := func(n int) []eventual.Message {
		out := make([]eventual.Message, n)
		for i := range out {
			m, err := noteKind.Message(note{N: i})
			if err != nil {
				t.Fatal(err)
			}
			m.ID = "note-" + strconv.Itoa(i)
			out[i] = m
		}
		return out
	}
	for _, n := range []int{limit + 1, 100} {
		err := s.InsertWith(ctx, Order(PK(0), 1, "pending"), msgs(n))
		var tm *eventual.TooManyMessagesError
		switch {
		case !errors.As(err, &tm) || tm.Count != n || tm.Limit != limit:
			t.Errorf("%d messages: %v, want an *eventual.TooManyMessagesError of %d, limit %d", n, err, n, limit)
		case !errors.Is(err, eventual.ErrInvalidMessage) || !errors.Is(err, entity.ErrInvalid):
			t.Errorf("%d messages: %v, want it to match eventual.ErrInvalidMessage and entity.ErrInvalid", n, err)
		case errors.Is(err, eventual.ErrTooLarge):
			t.Errorf("%d messages: %v matches eventual.ErrTooLarge", n, err)
		}
		if c := Contents(t, a.Env, st); len(c) != 0 {
			t.Errorf("%d messages refused, and the store holds %v", n, c)
		}
	}
	if err := s.InsertWith(ctx, Order(PK(0), 1, "pending"), msgs(limit)); err != nil {
		t.Fatalf("%d messages: %v", limit, err)
	}
	Drain(t, p)
	if n := handled.Load(); int(n) != limit {
		t.Errorf("%d messages handled, want %d", n, limit)
	}
	NoDrift(t, "after the insert", s)
	Lookups(t, s, l, []string{PK(0)}, Holders([]*entity.DynamicEntity{Order(PK(0), 1, "pending")}))
}

// CreateRace runs, as a subtest per layout the package has (each
// placement, and unique ones), ten writers that Modify with
// entity.ModifyOptions.Create one missing order at once, each adding one
// to its Number and giving it a status: each change is applied once (the
// losers of the insert start again as modifies), so the order, read raw,
// has Number 10; Check finds nothing once the queue drained, and the
// status finds exactly the order, listed and found.
func CreateRace(t *testing.T, a Adapter) {
	for _, l := range []Layout{{Placement: Same}, {Placement: Other}, {Placement: Wide, Buckets: 4}, {Placement: Blob}, {Placement: Same, Unique: true}, {Placement: Other, Unique: true}, {Placement: Wide, Buckets: 4, Unique: true}} {
		if !a.has(l) {
			continue
		}
		t.Run(l.String(), func(t *testing.T) {
			t.Parallel()
			createRace(t, &a, l)
		})
	}
}

func createRace(t *testing.T, a *Adapter, l Layout) {
	ctx := context.Background()
	const writers = 10
	st := a.NewStore(t)
	p := Processor(t, a.Env)
	s := a.Open(t, a.Env, st, l, p)
	pk, rk := PK(0), RK(1)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	start := make(chan struct{})
	for i := range writers {
		wg.Go(func() {
			<-start
			errs[i] = s.ModifyWith(ctx, pk, rk, func(e *entity.DynamicEntity) error {
				n, _ := e.Properties["Number"].(int64)
				e.Properties["Number"] = n + 1
				e.Properties["Status"] = "open"
				return nil
			}, entity.ModifyOptions{Create: true, Retry: entity.RetryPolicy{Attempts: 60}})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	Drain(t, p)
	c := Contents(t, a.Env, st)
	order, _ := c["primaries/"+pk+"/"+rk].(map[string]any)
	if got := fmt.Sprint(order["Number"]); got != strconv.Itoa(writers) {
		t.Errorf("the order, read raw: %v; want Number %d", order, writers)
	}
	NoDrift(t, "after the creators", s)
	Lookups(t, s, l, []string{pk}, map[string][]drift.Key{"open": {{PartitionKey: pk, RowKey: rk}}})
	// Without Create a missing order is still not found.
	if err := s.ModifyWith(ctx, pk, RK(2), func(*entity.DynamicEntity) error { return nil }, entity.ModifyOptions{}); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("Modify of a missing order without Create: %v, want ErrNotFound", err)
	}
}
