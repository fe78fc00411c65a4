package rotation_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/rotation"
)

// TestBadArguments calls every write with an argument that cannot work —
// a nil entity, an unknown mode, a nil or zero Rotation — and gets a typed
// error matching entity.ErrInvalid before any request, never a panic.
func TestBadArguments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	meter := cost.NewMeter()
	r := f.open(t, env.With(meter.Policy()), rotation.Config[Attempt]{})
	a := attempts(hour(0), 1, 1)[0]
	calls := map[string]func(r *rotation.Rotation[Attempt]) error{
		"Insert nil":    func(r *rotation.Rotation[Attempt]) error { return r.Insert(ctx, nil) },
		"Upsert nil":    func(r *rotation.Rotation[Attempt]) error { return r.Upsert(ctx, nil, entity.Replace) },
		"Upsert mode 7": func(r *rotation.Rotation[Attempt]) error { b := a; return r.Upsert(ctx, &b, 7) },
		"BulkWrite delete": func(r *rotation.Rotation[Attempt]) error {
			_, err := r.BulkWrite(ctx, []Attempt{a}, entity.BulkOptions{Mode: entity.OpDelete})
			return err
		},
	}
	for name, call := range calls {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panic %v", name, p)
				}
			}()
			if err := call(r); !errors.Is(err, entity.ErrInvalid) {
				t.Errorf("%s: %v, want entity.ErrInvalid", name, err)
			}
		}()
	}
	for _, z := range []*rotation.Rotation[Attempt]{nil, {}} {
		for name, call := range map[string]func(r *rotation.Rotation[Attempt]) error{
			"Insert": func(r *rotation.Rotation[Attempt]) error { b := a; return r.Insert(ctx, &b) },
			"Upsert": func(r *rotation.Rotation[Attempt]) error { b := a; return r.Upsert(ctx, &b, entity.Replace) },
			"BulkWrite": func(r *rotation.Rotation[Attempt]) error {
				_, err := r.BulkWrite(ctx, []Attempt{a}, entity.BulkOptions{})
				return err
			},
			"Prepare": func(r *rotation.Rotation[Attempt]) error { return r.Prepare(ctx, hour(0)) },
			"Table":   func(r *rotation.Rotation[Attempt]) error { _, err := r.Table(ctx, hour(0)); return err },
			"Expire":  func(r *rotation.Rotation[Attempt]) error { _, err := r.Expire(ctx, hour(0)); return err },
			"Periods": func(r *rotation.Rotation[Attempt]) error { _, err := r.Periods(ctx, hour(0), hour(1)); return err },
			"Query": func(r *rotation.Rotation[Attempt]) error {
				for _, err := range r.Query(ctx, hour(0), hour(1), entity.Query{}) {
					return err
				}
				return nil
			},
		} {
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s on %#v: panic %v", name, z, p)
					}
				}()
				if err := call(z); !errors.Is(err, entity.ErrInvalid) {
					t.Errorf("%s on %#v: %v, want entity.ErrInvalid", name, z, err)
				}
			}()
		}
	}
	if n := meter.Snapshot().Total(); n != 0 {
		t.Errorf("%d requests sent for bad arguments", n)
	}
}

// TestBulkWriteBadItems writes attempts of three periods among which one
// has a time no period can hold, one a key the service refuses, one
// belongs to an expired period: each of those fails alone, in its
// Outcome, with a typed error, and every other attempt is written.
func TestBulkWriteBadItems(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	r := f.open(t, env, rotation.Config[Attempt]{})
	write(t, r, attempts(hour(0), 1, 1))
	if _, err := r.Expire(ctx, hour(1)); err != nil {
		t.Fatal(err)
	}
	var all []Attempt
	for h := 1; h <= 3; h++ {
		all = append(all, attempts(hour(h), 2, 5)...)
	}
	good := slices.Clone(all)
	bad := map[int]error{
		3:  entity.ErrInvalid,   // a time in 1500
		12: entity.ErrInvalid,   // a '/' in the RowKey
		17: rotation.ErrExpired, // hour 0, expired
	}
	all[3].At = time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)
	all[12].RowKey = "a/b"
	all[17].At = hour(0)
	out, err := r.BulkWrite(ctx, all, entity.BulkOptions{})
	var be *entity.BulkError
	if !errors.As(err, &be) || be.Failed != len(bad) {
		t.Errorf("BulkWrite: %v, want a *entity.BulkError of %d failures", err, len(bad))
	}
	if len(out) != len(all) {
		t.Fatalf("%d outcomes for %d entities", len(out), len(all))
	}
	var want []Attempt
	for i, o := range out {
		if cause, ok := bad[i]; ok {
			if !errors.Is(o.Err, cause) {
				t.Errorf("entity %d: %v, want %v", i, o.Err, cause)
			}
			continue
		}
		if o.Err != nil {
			t.Errorf("entity %d, which is fine, failed: %v", i, o.Err)
		}
		want = append(want, good[i])
	}
	checkCatalog(t, f)
	if got := readAll(t, f.open(t, env, rotation.Config[Attempt]{}), hour(0), hour(5), entity.Query{}); !slices.Equal(keysOf(got), sorted(want)) {
		t.Errorf("read %d entities back, want the %d good ones", len(got), len(want))
	}
}
