package rotation_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/rotation"
)

// The seams of every public write of a Rotation:
//
//	operation         lost reply + competing insert/replace/merge/delete   crash at every request k                 one bad item among many
//	Insert, Upsert    TestLostReplyMatrix (entity, claim, create table)   TestCrashMatrix                          —
//	BulkWrite         TestLostReplyMatrix (entity)                        TestCrashMatrix                          TestBulkWriteBadItems
//	Table, Prepare    TestLostReplyMatrix (claim)                         TestCrashMatrix                          —
//	Expire            TestLostReplyMatrix (mark, clean-up)                TestExpireCrashRecoveredByFreshRotation  —
//
// Each run checks with plain clients that the rotation's tables are
// exactly those its catalog names, that nothing of a period before the
// expiry mark is left, and that a write whose first try was executed is
// reported applied, ErrExpired (its period expired meanwhile) or
// entity.ErrOutcomeUnknown — never refused.

// rawEntity writes or deletes one entity of table with a plain aztables
// client, whatever its version: another program.
func rawEntity(ctx context.Context, table, kind, pk, rk string) error {
	c := env.TableService.NewClient(table)
	star := azcore.ETagAny
	body := []byte(`{"PartitionKey":"` + pk + `","RowKey":"` + rk + `","At@odata.type":"Edm.DateTime","At":"` + hour(1).Format("2006-01-02T15:04:05Z") + `","Comp":"` + kind + `"}`)
	var err error
	switch kind {
	case "insert":
		_, err = c.AddEntity(ctx, body, nil)
	case "replace":
		_, err = c.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: &star})
	case "merge":
		_, err = c.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &star})
	case "delete":
		_, err = c.DeleteEntity(ctx, pk, rk, &aztables.DeleteEntityOptions{IfMatch: &star})
	}
	return err
}

// TestLostReplyMatrix loses the reply to one request of each write — an
// entity's write, a claim of new periods, the expiry mark, the catalog's
// clean-up — after the service executed it, and inside azcore's retry
// window another process inserts, replaces, merges or deletes the same
// keys: an entity by a plain client, the catalog through its own
// Rotation (a writer claiming periods, an Expire, a Prepare).
func TestLostReplyMatrix(t *testing.T) {
	t.Parallel()
	type op struct {
		name string
		lose func(f *fixture, r *http.Request) bool
		run  func(ctx context.Context, r *rotation.Rotation[Attempt]) error
		// compete is the other process's write of the same keys.
		compete func(ctx context.Context, f *fixture, kind string, table string) error
	}
	entityWrite := func(f *fixture, r *http.Request) bool {
		return r.Method != http.MethodGet && strings.Contains(r.URL.Path, f.name+hour(1).Format("2006010215")) && !strings.Contains(r.URL.Path, "Tables")
	}
	isBatch := func(f *fixture, r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/$batch")
	}
	// One partition, so BulkWrite sends one $batch: the lost reply is the
	// one whose first entity the other process writes (three partitions'
	// batches run at once, and losing another's would make the conflict a
	// true one).
	a := attempts(hour(1), 1, 3)
	onEntity := func(ctx context.Context, f *fixture, kind, table string) error {
		return rawEntity(ctx, table, kind, a[0].PartitionKey, a[0].RowKey)
	}
	onCatalog := func(ctx context.Context, f *fixture, kind, _ string) error {
		other := f.open(t, env, rotation.Config[Attempt]{})
		switch kind {
		case "insert": // another writer claims the same period
			b := attempts(hour(1), 5, 1)[4]
			return other.Insert(ctx, &b)
		case "replace": // another Expire moves the mark, to before the period
			_, err := other.Expire(ctx, hour(0))
			return err
		case "merge": // another writer claims periods ahead
			return other.Prepare(ctx, hour(3))
		default: // another Expire deletes the period
			_, err := other.Expire(ctx, hour(3))
			return err
		}
	}
	ops := []op{
		{name: "Insert/entity", lose: entityWrite, compete: onEntity, run: func(ctx context.Context, r *rotation.Rotation[Attempt]) error {
			b := a[0]
			return r.Insert(ctx, &b)
		}},
		{name: "Upsert/entity", lose: entityWrite, compete: onEntity, run: func(ctx context.Context, r *rotation.Rotation[Attempt]) error {
			b := a[0]
			return r.Upsert(ctx, &b, entity.Replace)
		}},
		{name: "BulkWrite/entity", lose: isBatch, compete: onEntity, run: func(ctx context.Context, r *rotation.Rotation[Attempt]) error {
			_, err := r.BulkWrite(ctx, a, entity.BulkOptions{Mode: entity.OpInsert})
			return err
		}},
		{name: "Insert/claim", lose: isBatch, compete: onCatalog, run: func(ctx context.Context, r *rotation.Rotation[Attempt]) error {
			b := a[0]
			return r.Insert(ctx, &b)
		}},
		{name: "Insert/create table", lose: func(f *fixture, r *http.Request) bool {
			return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/Tables")
		}, compete: onCatalog, run: func(ctx context.Context, r *rotation.Rotation[Attempt]) error {
			b := a[0]
			return r.Insert(ctx, &b)
		}},
		{name: "Table/claim", lose: isBatch, compete: onCatalog, run: func(ctx context.Context, r *rotation.Rotation[Attempt]) error {
			_, err := r.Table(ctx, hour(1))
			return err
		}},
		{name: "Prepare/claim", lose: isBatch, compete: onCatalog, run: func(ctx context.Context, r *rotation.Rotation[Attempt]) error {
			return r.Prepare(ctx, hour(1))
		}},
		{name: "Expire/mark", lose: func(f *fixture, r *http.Request) bool {
			return (r.Method == http.MethodPatch || r.Method == "MERGE" || r.Method == http.MethodPut) && strings.Contains(r.URL.Path, f.catalog)
		}, compete: onCatalog, run: func(ctx context.Context, r *rotation.Rotation[Attempt]) error {
			_, err := r.Expire(ctx, hour(2))
			return err
		}},
		{name: "Expire/clean-up", lose: isBatch, compete: onCatalog, run: func(ctx context.Context, r *rotation.Rotation[Attempt]) error {
			_, err := r.Expire(ctx, hour(2))
			return err
		}},
	}
	for _, o := range ops {
		for _, kind := range []string{"insert", "replace", "merge", "delete"} {
			t.Run(o.name+"/"+kind, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				f := newFixture(t)
				// Hour 0 written; hour 1 created ahead unless the operation
				// claims it.
				setup := f.open(t, env, rotation.Config[Attempt]{Ahead: -1})
				write(t, setup, attempts(hour(0), 1, 2))
				var table string
				if strings.HasSuffix(o.name, "/entity") || strings.HasPrefix(o.name, "Expire") {
					tbl, err := setup.Table(ctx, hour(1))
					if err != nil {
						t.Fatal(err)
					}
					table = tbl.Name()
				}
				var compErr error
				var fired atomic.Bool
				inj := faults.New(faults.Config{})
				inj.LoseNextThen(1, func(r *http.Request) bool { return o.lose(f, r) }, func(*http.Request) {
					fired.Store(true)
					compErr = o.compete(ctx, f, kind, table)
				})
				cfg := rotation.Config[Attempt]{}
				if strings.HasSuffix(o.name, "/entity") {
					cfg.Ahead = -1 // no claim: the first $batch is the entities'
				}
				r := f.open(t, env.With(inj), cfg)
				err := o.run(ctx, r)
				if !fired.Load() {
					t.Fatal("no reply was lost")
				}
				t.Logf("%s: %v; the other process's %s: %v", o.name, err, kind, compErr)
				if err != nil && !errors.Is(err, entity.ErrOutcomeUnknown) && !errors.Is(err, rotation.ErrExpired) {
					t.Errorf("%s, executed, its reply lost, with a %s in between: %v; want success, ErrExpired or entity.ErrOutcomeUnknown", o.name, kind, err)
				}
				checkCatalog(t, f)
			})
		}
	}
}

// TestCrashMatrix kills Insert (of a new period), BulkWrite (over three
// new periods), Table and Prepare after each of their storage requests — the
// catalog read, the claim, each table's creation, the second read of the
// mark, the entities' writes — then a fresh Rotation, knowing only what is
// stored, writes the same entities: the rotation's tables are exactly
// those its catalog names, and every entity is read back.
func TestCrashMatrix(t *testing.T) {
	t.Parallel()
	all := append(append(attempts(hour(1), 2, 3), attempts(hour(2), 2, 3)...), attempts(hour(3), 2, 3)...)
	ops := map[string]func(ctx context.Context, r *rotation.Rotation[Attempt]) ([]Attempt, error){
		"Insert": func(ctx context.Context, r *rotation.Rotation[Attempt]) ([]Attempt, error) {
			b := all[0]
			return all[:1], r.Insert(ctx, &b)
		},
		"BulkWrite": func(ctx context.Context, r *rotation.Rotation[Attempt]) ([]Attempt, error) {
			_, err := r.BulkWrite(ctx, all, entity.BulkOptions{})
			return all, err
		},
		"Prepare": func(ctx context.Context, r *rotation.Rotation[Attempt]) ([]Attempt, error) {
			return nil, r.Prepare(ctx, hour(1))
		},
		"Table": func(ctx context.Context, r *rotation.Rotation[Attempt]) ([]Attempt, error) {
			_, err := r.Table(ctx, hour(1))
			return nil, err
		},
	}
	for name, run := range ops {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				f := newFixture(t)
				write(t, f.open(t, env, rotation.Config[Attempt]{Ahead: -1}), attempts(hour(0), 1, 2))
				var written []Attempt
				return crashtest.Run{
					Work: func(ctx context.Context, kenv *integration.Env) error {
						var err error
						written, err = run(ctx, f.open(t, kenv, rotation.Config[Attempt]{}))
						return err
					},
					Recover: func(ctx context.Context) error {
						fresh := f.open(t, env, rotation.Config[Attempt]{})
						if written == nil {
							return fresh.Prepare(ctx, hour(1))
						}
						_, err := fresh.BulkWrite(ctx, written, entity.BulkOptions{})
						return err
					},
					Check: func(t *testing.T) {
						checkCatalog(t, f)
						want := append(attempts(hour(0), 1, 2), written...)
						if got := readAll(t, f.open(t, env, rotation.Config[Attempt]{}), hour(0), hour(5), entity.Query{}); !slices.Equal(keysOf(got), sorted(want)) {
							t.Errorf("read %d entities, want %d", len(got), len(want))
						}
					},
				}
			}})
		})
	}
}
