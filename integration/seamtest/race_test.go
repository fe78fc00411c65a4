package seamtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/integration/seamtest"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

type row struct {
	PartitionKey, RowKey string
	ETag                 string `table:",etag"`
	N                    int
	By                   string
}

// compete is the second writer on (pk, rk), through a raw client.
func compete(ctx context.Context, raw *aztables.Client, kind, pk, rk string) error {
	body := []byte(fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"N":99,"By":"other"}`, pk, rk))
	var err error
	switch kind {
	case seamtest.Insert:
		_, err = raw.AddEntity(ctx, body, nil)
	case seamtest.Replace:
		_, err = raw.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
	case seamtest.Merge:
		_, err = raw.UpdateEntity(ctx, body, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
	case seamtest.Delete:
		_, err = raw.DeleteEntity(ctx, pk, rk, nil)
	}
	return err
}

// stored reads (pk, rk) with the raw client: its By, or "" when absent.
func stored(t *testing.T, raw *aztables.Client, pk, rk string) (by string, found bool) {
	t.Helper()
	resp, err := raw.GetEntity(t.Context(), pk, rk, nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	var r row
	if err := entity.Unmarshal(resp.Value, &r); err != nil {
		t.Fatal(err)
	}
	return r.By, true
}

// Every single-entity write of entity, with the reply of its request lost
// and each kind of second writer inside the retry window: the answer is
// success or ErrOutcomeUnknown (the change was executed), never a refusal.
func TestEntityWritesAreTruthfulBesideASecondWriter(t *testing.T) {
	type op struct {
		name   string
		exists bool // the entity is there before the operation
		do     func(ctx context.Context, tbl *entity.Table[row], etag string) error
	}
	ops := []op{
		{"Insert", false, func(ctx context.Context, tbl *entity.Table[row], _ string) error {
			return tbl.Insert(ctx, &row{PartitionKey: "p", RowKey: "r", N: 1, By: "me"})
		}},
		{"Update", true, func(ctx context.Context, tbl *entity.Table[row], etag string) error {
			return tbl.Update(ctx, &row{PartitionKey: "p", RowKey: "r", ETag: etag, N: 2, By: "me"}, entity.Replace)
		}},
		{"UpdateAny", true, func(ctx context.Context, tbl *entity.Table[row], _ string) error {
			return tbl.UpdateAny(ctx, &row{PartitionKey: "p", RowKey: "r", N: 2, By: "me"}, entity.Replace)
		}},
		{"Upsert", false, func(ctx context.Context, tbl *entity.Table[row], _ string) error {
			return tbl.Upsert(ctx, &row{PartitionKey: "p", RowKey: "r", N: 2, By: "me"}, entity.Replace)
		}},
		{"Delete", true, func(ctx context.Context, tbl *entity.Table[row], etag string) error {
			return tbl.Delete(ctx, "p", "r", etag)
		}},
		{"DeleteIfExists", true, func(ctx context.Context, tbl *entity.Table[row], _ string) error {
			_, err := tbl.DeleteIfExists(ctx, "p", "r")
			return err
		}},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			seamtest.EveryReply(t, env, seamtest.Race{Prepare: func(t *testing.T) seamtest.RaceRun {
				name := env.TableName(t)
				if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
					t.Fatal(err)
				}
				raw := env.TableService.NewClient(name)
				var etag string
				if o.exists {
					resp, err := raw.AddEntity(t.Context(), []byte(`{"PartitionKey":"p","RowKey":"r","N":0,"By":"before"}`), nil)
					if err != nil {
						t.Fatal(err)
					}
					etag = string(resp.ETag)
				}
				return seamtest.RaceRun{
					Work: func(ctx context.Context, v *integration.Env) error {
						tbl, err := entity.NewTableFromService[row](v.TableService, name)
						if err != nil {
							return err
						}
						return o.do(ctx, tbl, etag)
					},
					Compete: func(ctx context.Context, kind string, _ *http.Request) error {
						return compete(ctx, raw, kind, "p", "r")
					},
					Check: func(t *testing.T, kind string, err error) {
						// Every request of these operations is their one
						// write (or a read before it): a lost reply means
						// the change was executed.
						seamtest.Truthful(t, o.name, err, true)
						if kind == "" {
							by, found := stored(t, raw, "p", "r")
							if want := o.name != "Delete" && o.name != "DeleteIfExists"; found != want || found && by != "me" {
								t.Errorf("without a fault: stored %q (found %v)", by, found)
							}
						}
					},
				}
			}})
		})
	}
}

// CreateTable and DeleteTable with the reply of their request lost: the
// resend meets the table the first try made (409) or removed (404); the
// answer is never that refusal. With a second writer inside the retry
// window (deleting the table the first try made, creating again the one it
// removed) the resend applies again and the call succeeds. Without a lost
// reply, an existing (missing) table is still refused with
// ErrAlreadyExists (ErrTableNotFound), not ErrOutcomeUnknown.
func TestTableLifecycleIsTruthfulAfterALostReply(t *testing.T) {
	ctx := t.Context()
	ops := []string{"CreateTable", "CreateTableIfNotExists", "DeleteTable"}
	for _, op := range ops {
		for _, second := range []string{"none", "undo", "no lost reply"} {
			t.Run(op+"/"+second, func(t *testing.T) {
				name := env.TableName(t)
				create := op != "DeleteTable"
				// The table is there before a delete, and before a create
				// that is refused because nothing was lost.
				if !create || second == "no lost reply" && op == "CreateTable" {
					if _, err := env.TableService.CreateTable(ctx, name, nil); err != nil {
						t.Fatal(err)
					}
				}
				inj := faults.New(faults.Config{})
				tbl, err := entity.NewTableFromService[row](env.With(inj).TableService, name)
				if err != nil {
					t.Fatal(err)
				}
				switch second {
				case "none":
					inj.LoseNext(1, nil)
				case "undo":
					// Another process undoes the executed first try before
					// azcore's resend, through a client without the injector.
					inj.LoseNextThen(1, nil, func(*http.Request) {
						var err error
						if create {
							_, err = env.TableService.DeleteTable(ctx, name, nil)
						} else {
							_, err = env.TableService.CreateTable(ctx, name, nil)
						}
						if err != nil {
							t.Errorf("the second writer: %v", err)
						}
					})
				}
				switch op {
				case "CreateTable":
					err = tbl.CreateTable(ctx)
				case "CreateTableIfNotExists":
					err = tbl.CreateTableIfNotExists(ctx)
				default:
					err = tbl.DeleteTable(ctx)
				}
				t.Logf("%s: %v", op, err)
				lost := inj.Stats().LostReplies
				if (lost == 1) != (second != "no lost reply") {
					t.Fatalf("%d replies lost", lost)
				}
				_, gerr := env.TableService.NewClient(name).GetEntity(ctx, "p", "r", nil)
				var re *azcore.ResponseError
				exists := !(errors.As(gerr, &re) && re.ErrorCode == "TableNotFound")
				if exists != create {
					t.Errorf("after %s the table exists: %v", op, exists)
				}
				if second == "no lost reply" {
					switch {
					case op == "CreateTable" && (!errors.Is(err, entity.ErrAlreadyExists) || errors.Is(err, entity.ErrOutcomeUnknown)):
						t.Errorf("CreateTable of an existing table, no reply lost: %v, want ErrAlreadyExists only", err)
					case op == "CreateTableIfNotExists" && err != nil:
						t.Errorf("CreateTableIfNotExists: %v", err)
					case op == "DeleteTable" && err != nil:
						t.Errorf("DeleteTable of an existing table, no reply lost: %v", err)
					}
					return
				}
				seamtest.Truthful(t, op, err, true)
				if (op == "CreateTableIfNotExists" || second == "undo") && err != nil {
					t.Errorf("%s: %v, want nil", op, err)
				}
			})
		}
	}
	// A delete of a missing table, no reply lost: refused, not unknown.
	tbl, err := entity.NewTableFromService[row](env.TableService, env.TableName(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.DeleteTable(ctx); !errors.Is(err, entity.ErrTableNotFound) || errors.Is(err, entity.ErrOutcomeUnknown) {
		t.Errorf("DeleteTable of a missing table: %v, want ErrTableNotFound only", err)
	}
}

// With Race.Parallel, EveryReply runs that many lost-reply runs at once,
// whatever go test's -parallel, and never more: the three runs' checks
// meet at a barrier of three (which never opens if fewer run at once).
func TestEveryReplyRunsParallelAtOnce(t *testing.T) {
	const width = 3
	meet := crashtest.NewBarrier(width)
	var mu sync.Mutex
	inFlight, most := 0, 0
	n := seamtest.EveryReply(t, env, seamtest.Race{Parallel: width, Timeout: 30 * time.Second, Competitors: []string{seamtest.Insert},
		Prepare: func(t *testing.T) seamtest.RaceRun {
			mu.Lock()
			inFlight++
			most = max(most, inFlight)
			mu.Unlock()
			t.Cleanup(func() {
				mu.Lock()
				inFlight--
				mu.Unlock()
			})
			return seamtest.RaceRun{
				Work: func(ctx context.Context, e *integration.Env) error {
					for range width {
						if _, err := e.TableService.GetProperties(ctx, nil); err != nil {
							return err
						}
					}
					return nil
				},
				Compete: func(context.Context, string, *http.Request) error { return nil },
				Check: func(t *testing.T, kind string, err error) {
					if err != nil {
						t.Errorf("%s: %v", kind, err)
					}
					if kind == "" {
						return
					}
					ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
					defer cancel()
					if err := meet.Wait(ctx); err != nil {
						t.Errorf("fewer than %d runs at once: %v", width, err)
					}
				},
			}
		}})
	if n != width {
		t.Fatalf("the operation made %d requests, want %d", n, width)
	}
	if most > width {
		t.Errorf("%d runs at once, want at most %d", most, width)
	}
}
