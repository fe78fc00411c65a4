package indexentity_test

import (
	"context"
	"iter"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/internal/patterntest/indextest"
)

// suite is the adapter of the index packages' shared scenarios
// (indextest) to this package.
func suite() indextest.Adapter {
	return indextest.Adapter{
		Env:         env,
		MaxMessages: indexentity.MaxMessages,
		Placements:  []indextest.Placement{indextest.Same, indextest.Other, indextest.Wide, indextest.Blob},
		Open: func(t testing.TB, e *integration.Env, st indextest.Store, l indextest.Layout, p *eventual.Processor) indextest.Set {
			t.Helper()
			cfg := indexentity.Config{Processor: p, PrimaryPrefix: "order_", Blobs: st.Container, Retry: hot}
			if l.Entries {
				cfg.Entries = patterntest.View[entity.DynamicEntity](t, e, st.Entries)
			}
			ix := indexentity.Index[entity.DynamicEntity]{
				Name: "status", Value: indextest.Status, Buckets: l.Buckets,
				Placement: []indexentity.Placement{indexentity.SamePartition, indexentity.OtherPartition, indexentity.TableWide, indexentity.Blob}[l.Placement],
			}
			s, err := indexentity.New(patterntest.View[entity.DynamicEntity](t, e, st.Primaries), cfg, ix)
			if err != nil {
				t.Fatal(err)
			}
			return suiteSet{s, l.Placement == indextest.Wide}
		},
	}
}

type suiteSet struct {
	s    *indexentity.Set[entity.DynamicEntity]
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
	return x.s.Insert(ctx, e, indexentity.WriteOptions{Messages: msgs})
}

func (x suiteSet) Provision(ctx context.Context) error { return x.s.Provision(ctx) }

func (x suiteSet) Delete(ctx context.Context, pk, rk string) error {
	return x.s.Delete(ctx, pk, rk, "")
}

func (x suiteSet) Check(ctx context.Context) iter.Seq2[drift.Finding, error] {
	return x.s.Check(ctx, indexentity.CheckOptions{})
}

func (x suiteSet) Rebuild(ctx context.Context) (drift.Summary, error) {
	return x.s.Rebuild(ctx, indexentity.CheckOptions{})
}

func (x suiteSet) Listed(ctx context.Context, pk, value string) ([]drift.Key, error) {
	if x.wide {
		return x.s.ValueMembers(ctx, "status", value)
	}
	rks, err := x.s.Members(ctx, "status", pk, value)
	var out []drift.Key
	for _, rk := range rks {
		out = append(out, drift.Key{PartitionKey: pk, RowKey: rk})
	}
	return out, err
}

func (x suiteSet) Found(ctx context.Context, pk, value string) ([]drift.Key, error) {
	seq := x.s.LookupAll(ctx, "status", pk, value, indexentity.LookupOptions{})
	if x.wide {
		seq = x.s.LookupValueAll(ctx, "status", value, indexentity.LookupOptions{})
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
