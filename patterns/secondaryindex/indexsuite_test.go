package secondaryindex_test

import (
	"context"
	"iter"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/internal/patterntest/indextest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// suite is the adapter of the index packages' shared scenarios
// (indextest) to this package.
func suite() indextest.Adapter {
	return indextest.Adapter{
		Env:         env,
		MaxMessages: secondaryindex.MaxMessages,
		Placements:  []indextest.Placement{indextest.Same, indextest.Other, indextest.Wide},
		Unique:      true,
		Copies:      true,
		Open: func(t testing.TB, e *integration.Env, st indextest.Store, l indextest.Layout, p *eventual.Processor) indextest.Set {
			t.Helper()
			cfg := secondaryindex.Config{Processor: p, PrimaryPrefix: "order_"}
			if l.Entries {
				cfg.Entries = patterntest.View[entity.DynamicEntity](t, e, st.Entries)
			}
			ix := secondaryindex.Index[entity.DynamicEntity]{
				Name: "status", Key: indextest.Status, Unique: l.Unique, Properties: l.Properties, Buckets: l.Buckets,
				Placement: []secondaryindex.Placement{secondaryindex.SamePartition, secondaryindex.OtherPartition, secondaryindex.TableWide}[l.Placement],
			}
			s, err := secondaryindex.New(patterntest.View[entity.DynamicEntity](t, e, st.Primaries), cfg, ix)
			if err != nil {
				t.Fatal(err)
			}
			return suiteSet{s, l.Placement == indextest.Wide}
		},
	}
}

type suiteSet struct {
	s    *secondaryindex.Set[entity.DynamicEntity]
	wide bool
}

func (x suiteSet) Insert(ctx context.Context, e *entity.DynamicEntity) error {
	return x.s.Insert(ctx, e)
}

func (x suiteSet) Modify(ctx context.Context, pk, rk string, change func(*entity.DynamicEntity) error) error {
	_, err := x.s.Modify(ctx, pk, rk, change, entity.ModifyOptions{})
	return err
}

func (x suiteSet) ModifyWith(ctx context.Context, pk, rk string, change func(*entity.DynamicEntity) error, opts entity.ModifyOptions) error {
	_, err := x.s.Modify(ctx, pk, rk, change, opts)
	return err
}

func (x suiteSet) InsertWith(ctx context.Context, e *entity.DynamicEntity, msgs []eventual.Message) error {
	return x.s.Insert(ctx, e, secondaryindex.WriteOptions{Messages: msgs})
}

func (x suiteSet) Provision(ctx context.Context) error { return x.s.Provision(ctx) }

func (x suiteSet) Delete(ctx context.Context, pk, rk string) error {
	return x.s.Delete(ctx, pk, rk, "")
}

func (x suiteSet) Check(ctx context.Context) iter.Seq2[drift.Finding, error] {
	return x.s.Check(ctx, secondaryindex.CheckOptions{})
}

func (x suiteSet) Rebuild(ctx context.Context) (drift.Summary, error) {
	return x.s.Rebuild(ctx, secondaryindex.CheckOptions{})
}

func (x suiteSet) lookup(ctx context.Context, pk, value string, verify bool) ([]drift.Key, error) {
	opts := secondaryindex.LookupOptions{Verify: verify}
	seq := x.s.LookupAll(ctx, "status", pk, value, opts)
	if x.wide {
		seq = x.s.LookupValueAll(ctx, "status", value, opts)
	}
	var out []drift.Key
	for e, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, drift.Key{PartitionKey: e.PartitionKey, RowKey: e.RowKey})
	}
	return out, nil
}

func (x suiteSet) Listed(ctx context.Context, pk, value string) ([]drift.Key, error) {
	return x.lookup(ctx, pk, value, false)
}

func (x suiteSet) Found(ctx context.Context, pk, value string) ([]drift.Key, error) {
	return x.lookup(ctx, pk, value, true)
}

// TestLayoutChange runs indextest.LayoutChange: one Rebuild after any
// change of the index's layout leaves exactly what the new layout writes.
func TestLayoutChange(t *testing.T) {
	t.Parallel()
	indextest.LayoutChange(t, suite())
}

// TestUnwritable runs indextest.Unwritable: a write whose entry or list
// could never be written is refused before anything is stored, or
// converges; no message is poisoned by it.
func TestUnwritable(t *testing.T) {
	t.Parallel()
	indextest.Unwritable(t, suite())
}

// TestReleaseUnknown runs indextest.ReleaseUnknown: a worker's removal of
// an old value's entry whose outcome is unknown (each try failed before
// sending) is settled or retried, never taken for done.
func TestReleaseUnknown(t *testing.T) {
	t.Parallel()
	indextest.ReleaseUnknown(t, suite())
}

// TestTooManyMessages runs indextest.TooManyMessages: a write carrying
// more of the caller's messages than MaxMessages (less two per
// SamePartition index) is refused before any request with an
// *eventual.TooManyMessagesError, nothing written; the limit commits.
func TestTooManyMessages(t *testing.T) {
	t.Parallel()
	indextest.TooManyMessages(t, suite())
}

// TestModifyCreate runs indextest.CreateRace: ten writers Modify one
// missing primary with entity.ModifyOptions.Create at once, each change
// applied once, the index in line with the primary (read raw).
func TestModifyCreate(t *testing.T) {
	t.Parallel()
	indextest.CreateRace(t, suite())
}

// TestProvision runs indextest.Provision: Provision creates the Set's
// tables, queues (and container), twice and with every create's reply
// lost, and the Set then works.
func TestProvision(t *testing.T) {
	t.Parallel()
	indextest.Provision(t, suite())
}
