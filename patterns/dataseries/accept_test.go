package dataseries_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/dataseries"
)

// afterPolicy runs then (up to n times) right after a request that match
// accepts got its reply, before the caller sees it: the place of another
// program's write between two requests of one call.
type afterPolicy struct {
	n     atomic.Int32
	match func(*http.Request) bool
	then  func()
}

func (p *afterPolicy) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err == nil && p.match(req.Raw()) && p.n.Add(-1) >= 0 {
		p.then()
	}
	return resp, err
}

// afterReads runs then (up to n times) right after a read of the series
// got its reply, before the caller sees it, telling whether it found the
// entity: the place of another program's write between an Add's read and
// its write.
type afterReads struct {
	n    atomic.Int32
	then func(found bool)
}

func (p *afterReads) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err == nil && req.Raw().Method == http.MethodGet && p.n.Add(-1) >= 0 {
		p.then(resp.StatusCode == http.StatusOK)
	}
	return resp, err
}

// Another program deletes a series entity between an Add's read and its
// merge, once or twice. Add promises to create the series when it does
// not exist: it creates it again and counts the increment, rather than
// report the series not found. A program that deletes the entity after
// every read that finds it, and creates it after every read that does
// not, makes every round lose: Add gives up with entity.ErrContention
// after Config.Retry's rounds, never loops for ever, and its increment is
// not stored.
func TestAddCreatesAgainAfterADelete(t *testing.T) {
	t.Parallel()
	name := sharedTable(t)
	raw := env.TableService.NewClient(name)
	ctx := t.Context()
	for _, c := range []struct {
		name  string
		flips int32
	}{{"once", 1}, {"twice", 3}, {"always", 1 << 20}} {
		t.Run(c.name, func(t *testing.T) {
			rk := "deleted-" + c.name
			if err := rawWrite(ctx, raw, "insert", "p", rk, map[string]any{"C02": aztables.EDMInt64(0)}); err != nil {
				t.Fatal(err)
			}
			p := &afterReads{then: func(found bool) {
				mode, props := "delete", map[string]any(nil)
				if !found {
					mode, props = "insert", map[string]any{"C02": aztables.EDMInt64(0)}
				}
				if err := rawWrite(context.Background(), raw, mode, "p", rk, props); err != nil {
					t.Error(err)
				}
			}}
			p.n.Store(c.flips)
			s := seriesOn(t, env.With(p), name, dataseries.Config{Retry: entity.RetryPolicy{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
			v, err := s.Add(ctx, "p", rk, 2, 1)
			if c.flips > 4 {
				var se *dataseries.Error
				if !errors.Is(err, entity.ErrContention) || !errors.As(err, &se) || se.RowKey != rk {
					t.Fatalf("Add beside a deleter that never stops: %d, %v; want an *Error naming %q matching ErrContention", v, err, rk)
				}
				if e := rawEntity(t, raw, "p", rk); e != nil && rawCounter(t, e, "C02") != 0 {
					t.Fatalf("an Add reported failed left %v", e)
				}
				return
			}
			if err != nil || v != 1 {
				t.Fatalf("Add after its series was deleted: %d, %v; want 1", v, err)
			}
			if got := rawCounter(t, rawEntity(t, raw, "p", rk), "C02"); got != 1 {
				t.Fatalf("stored %d, want 1", got)
			}
		})
	}
}

// A Config whose Slots is so large that counting its entities overflows
// is refused by New, like any series of more than 1,000 entities, rather
// than accepted and make Get panic.
func TestNewRefusesHugeSlots(t *testing.T) {
	t.Parallel()
	tbl := newTable(t, env)
	for _, cfg := range []dataseries.Config{
		{Slots: math.MaxInt},
		{Slots: math.MaxInt - 100, SlotsPerEntity: 251},
		{Slots: math.MaxInt, SlotsPerEntity: 1},
		{Slots: 1000*251 + 1, SlotsPerEntity: 251},
	} {
		s, err := dataseries.New(tbl, cfg)
		var ce *dataseries.ConfigError
		if !errors.As(err, &ce) || ce.Field != "Config.Slots" || !errors.Is(err, dataseries.ErrInvalid) {
			t.Errorf("New(Slots %d, SlotsPerEntity %d) = %v, %v; want a *ConfigError about Config.Slots", cfg.Slots, cfg.SlotsPerEntity, s != nil, err)
		}
	}
	if _, err := dataseries.New(tbl, dataseries.Config{Slots: 1000 * 251, SlotsPerEntity: 251}); err != nil {
		t.Errorf("1,000 entities of 251 slots: %v", err)
	}
}

// Another program writes the slot between every read and every merge of
// an Add: each round loses, and after Config.Retry's rounds Add fails with
// entity.ErrContention naming the entity, having changed nothing — the
// stored counter holds the other program's writes only.
func TestContentionChangesNothing(t *testing.T) {
	t.Parallel()
	name := sharedTable(t)
	raw := env.TableService.NewClient(name)
	ctx := t.Context()
	if err := rawWrite(ctx, raw, "insert", "p", "busy", map[string]any{"C01": aztables.EDMInt64(0)}); err != nil {
		t.Fatal(err)
	}
	var others int64
	p := &afterPolicy{match: func(r *http.Request) bool { return r.Method == http.MethodGet }, then: func() {
		others++
		if err := rawWrite(context.Background(), raw, "merge", "p", "busy", map[string]any{"C01": aztables.EDMInt64(others * 100)}); err != nil {
			t.Error(err)
		}
	}}
	p.n.Store(1 << 20)
	s := seriesOn(t, env.With(p), name, dataseries.Config{Retry: entity.RetryPolicy{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	v, err := s.Add(ctx, "p", "busy", 1, 1)
	var se *dataseries.Error
	if !errors.Is(err, entity.ErrContention) || !errors.As(err, &se) || se.RowKey != "busy" {
		t.Fatalf("Add losing every round: %d, %v; want an *Error naming \"busy\" matching ErrContention", v, err)
	}
	if got := rawCounter(t, rawEntity(t, raw, "p", "busy"), "C01"); got != others*100 {
		t.Fatalf("stored %d, want %d: the failed Add changed the counter", got, others*100)
	}
}
