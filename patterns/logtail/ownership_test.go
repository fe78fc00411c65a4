package logtail_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// TestPlainWrites changes a log's entries beside the Log, through a plain
// entity.Table, and records what the package doc's Ownership section says
// each leaves: a merge into an entry changes it in place (Tail returns the
// new content at the entry's place: the log is append-only by convention,
// not enforced); a delete of an entry in the middle leaves a hole that
// Tail, Since and Trim step over (Trim counts only what it deletes).
func TestPlainWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t)
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	l := newLog(t, tbl, logtail.Config{Now: stepClock(t0, time.Minute)})
	entries := []*Attempt{{N: 0}, {N: 1}, {N: 2}, {N: 3}}
	if err := l.Append(ctx, "p", entries...); err != nil {
		t.Fatal(err)
	}
	plain, err := entity.NewTable[entity.DynamicEntity](env.TableService.NewClient(tbl.Name()))
	if err != nil {
		t.Fatal(err)
	}
	edit := (&entity.DynamicEntity{PartitionKey: "p", RowKey: entries[2].RowKey, ETag: entity.AnyETag}).Set("N", int32(20))
	if err := plain.Update(ctx, edit, entity.Merge); err != nil {
		t.Fatal(err)
	}
	if err := plain.Delete(ctx, "p", entries[1].RowKey, entity.AnyETag); err != nil {
		t.Fatal(err)
	}
	tail, err := l.Tail(ctx, "p", 10)
	if err != nil {
		t.Fatal(err)
	}
	var ns []int32
	for _, e := range tail {
		ns = append(ns, e.N)
	}
	if want := []int32{3, 20, 0}; !slices.Equal(ns, want) {
		t.Errorf("Tail after a plain merge of entry 2 and delete of entry 1: %v, want %v", ns, want)
	}
	n, err := l.Trim(ctx, "p", t0.Add(time.Hour))
	if err != nil || n != 3 {
		t.Errorf("Trim = %d, %v; want the 3 entries left", n, err)
	}
}

// TestOncePerMessage: Append is not idempotent — each call writes new
// keys, so a handler of package eventual that appends counts a message
// delivered twice twice — while a handler that upserts the entry
// (eventual.Upsert) under a key made from the message — its creation time
// (Delivery.Created) as the guide's inverted ticks, then "_", a sequence
// number of 0 and "_" a writer id made from a hash of its ID — writes it
// once, where Tail, ParseKey and Trim treat it as any entry. Each message
// is enqueued twice with one ID, as a resent enqueue or a relay after a
// crash does.
func TestOncePerMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := newTable(t)
	l := newLog(t, tbl, logtail.Config{})
	qs := patterntest.Queues(t, env, 1)
	p, err := eventual.New(qs, nil, patterntest.Fast())
	if err != nil {
		t.Fatal(err)
	}
	type audit struct{ N int32 }
	var runs atomic.Int32
	appendKind := eventual.NewKind[audit]("logtail.test.Append.v1")
	upsertKind := eventual.NewKind[audit]("logtail.test.Upsert.v1")
	if err := eventual.Handle(p, appendKind, func(ctx context.Context, a audit) error {
		runs.Add(1)
		return l.Append(ctx, "appended", &Attempt{N: a.N})
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := eventual.Handle(p, upsertKind, func(ctx context.Context, a audit) error {
		runs.Add(1)
		d, _ := eventual.DeliveryFrom(ctx)
		sum := sha256.Sum256([]byte(d.ID))
		rk := keys.InvertedTicksSeq(d.Created, 0) + "_" + hex.EncodeToString(sum[:16])
		return eventual.Upsert(ctx, tbl, &Attempt{PartitionKey: "upserted", RowKey: rk, N: a.N})
	}, eventual.HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for i, k := range []eventual.Kind[audit]{appendKind, appendKind, upsertKind, upsertKind} {
		m, err := k.Message(audit{N: int32(i)})
		if err != nil {
			t.Fatal(err)
		}
		m.Created = t0.Add(time.Duration(i) * time.Minute)
		if err := p.Enqueue(ctx, m, m); err != nil {
			t.Fatal(err)
		}
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := patterntest.Drain(dctx, p, qs); err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 8 {
		t.Fatalf("the handlers ran %d times, want 8", n)
	}
	if got, err := l.Tail(ctx, "appended", 10); err != nil || len(got) != 4 {
		t.Errorf("Append in a handler, two messages delivered twice: %d entries, %v; want 4", len(got), err)
	}
	got, err := l.Tail(ctx, "upserted", 10)
	if err != nil || len(got) != 2 || got[0].N != 3 || got[1].N != 2 {
		t.Fatalf("Upsert under the message's key in a handler: %+v, %v; want messages 3 and 2, once each, newest first", got, err)
	}
	for i, e := range got {
		k, err := logtail.ParseKey(e.RowKey)
		if want := t0.Add(time.Duration(3-i) * time.Minute); err != nil || !k.Time.Equal(want) {
			t.Errorf("ParseKey(%q) = %+v, %v; want the message's creation time %v", e.RowKey, k, err, want)
		}
	}
	if n, err := l.Trim(ctx, "upserted", t0.Add(time.Hour)); err != nil || n != 2 {
		t.Errorf("Trim of the upserted entries = %d, %v; want 2", n, err)
	}
}
