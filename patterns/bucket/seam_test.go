package bucket_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/patterns/bucket"
)

// Tagged is an entry with an ETag, so that Write's ETags can be checked.
type Tagged struct {
	PartitionKey, RowKey string
	ETag                 string `table:",etag"`
	By                   string
	N                    int32
}

func entries(n int) []*Tagged {
	out := make([]*Tagged, n)
	for i := range out {
		out[i] = &Tagged{RowKey: fmt.Sprintf("e%02d", i), By: "me", N: int32(i)}
	}
	return out
}

// stored reads every entity of table name with the raw client, by RowKey.
func stored(t *testing.T, name string) map[string]entity.DynamicEntity {
	t.Helper()
	out := map[string]entity.DynamicEntity{}
	pager := env.TableService.NewClient(name).NewListEntitiesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Entities {
			var d entity.DynamicEntity
			if err := entity.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			if _, dup := out[d.RowKey]; dup {
				t.Errorf("RowKey %s stored twice", d.RowKey)
			}
			out[d.RowKey] = d
		}
	}
	return out
}

func newTagged(t *testing.T, e *integration.Env, name string) *entity.Table[Tagged] {
	t.Helper()
	tbl, err := entity.NewTableFromService[Tagged](e.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func createTable(t *testing.T) string {
	t.Helper()
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = env.TableService.DeleteTable(context.Background(), name, nil) })
	return name
}

// Write of many entries killed at every request — before it is sent, and
// after the service executed it — then the same entries written again by a
// fresh Spread (the recovery the doc gives): every entry is stored once,
// in its bucket, with its values; in Insert mode the second Write names
// exactly the entries the first had stored as already existing.
func TestWriteSurvivesACrashAtEveryRequest(t *testing.T) {
	for _, mode := range []entity.OpKind{entity.OpUpsertReplace, entity.OpInsert} {
		t.Run(mode.String(), func(t *testing.T) {
			crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				name := createTable(t)
				var before map[string]entity.DynamicEntity
				return crashtest.Run{
					Work: func(ctx context.Context, v *integration.Env) error {
						s := newSpreadOf(t, newTagged(t, v, name), bucket.Config{Buckets: 4, Mode: mode})
						return s.Write(ctx, "log", entries(10)...)
					},
					Recover: func(ctx context.Context) error {
						before = stored(t, name)
						s := newSpreadOf(t, newTagged(t, env, name), bucket.Config{Buckets: 4, Mode: mode})
						err := s.Write(ctx, "log", entries(10)...)
						var be *bucket.Error
						if mode == entity.OpInsert && errors.As(err, &be) {
							// A request the crashed run had sent may still be
							// executed after the crash, so an entry found stored
							// by then is refused too: every refusal is
							// ErrAlreadyExists, and covers what was stored.
							for _, o := range be.NotWritten {
								if !errors.Is(o.Err, entity.ErrAlreadyExists) {
									return fmt.Errorf("the second Write refused %s: %v", o.RowKey, o.Err)
								}
							}
							if len(be.NotWritten) < len(before) {
								return fmt.Errorf("the second Write refused %d entries, the crash had stored %d", len(be.NotWritten), len(before))
							}
							return nil
						}
						return err
					},
					Check: func(t *testing.T) {
						s := newSpreadOf(t, newTagged(t, env, name), bucket.Config{Buckets: 4})
						got := stored(t, name)
						if len(got) != 10 {
							t.Fatalf("%d entities stored, want 10", len(got))
						}
						for _, e := range entries(10) {
							d := got[e.RowKey]
							if d.PartitionKey != s.Partition("log", e.RowKey) || d.Properties["By"] != "me" || d.Properties["N"] != e.N {
								t.Errorf("%s stored as %+v", e.RowKey, d)
							}
						}
					},
				}
			}})
		})
	}
}

func newSpreadOf(t *testing.T, tbl *entity.Table[Tagged], cfg bucket.Config) *bucket.Spread[Tagged] {
	t.Helper()
	s, err := bucket.New(tbl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var entryKey = regexp.MustCompile(`RowKey(?:='|%27|":")(e0[0-9])`)

// keysIn are the RowKeys of entries a request names, in its URL or body.
func keysIn(req *http.Request) []string {
	text := req.URL.String()
	if req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			body, _ := io.ReadAll(b)
			text += string(body)
		}
	}
	var out []string
	for _, m := range entryKey.FindAllStringSubmatch(text, -1) {
		if k := m[1]; !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// Write — of one entry and of several, in each mode — with the reply of
// each request lost in turn and another writer inserting, replacing,
// merging or deleting the same entities before azcore's resend: an entry
// reported written holds this Write's values, with the ETag the table
// holds; an entry reported not written either matches ErrOutcomeUnknown or
// does not hold them.
func TestWriteBesideAnotherWriter(t *testing.T) {
	for _, mode := range []entity.OpKind{entity.OpUpsertReplace, entity.OpUpsertMerge, entity.OpInsert} {
		for _, n := range []int{1, 6} {
			t.Run(fmt.Sprintf("%s/%d entries", mode, n), func(t *testing.T) {
				seamtest.EveryReply(t, env, seamtest.Race{Prepare: func(t *testing.T) seamtest.RaceRun {
					name := createTable(t)
					raw := env.TableService.NewClient(name)
					var es []*Tagged
					var spread *bucket.Spread[Tagged]
					return seamtest.RaceRun{
						Work: func(ctx context.Context, v *integration.Env) error {
							spread = newSpreadOf(t, newTagged(t, v, name), bucket.Config{Buckets: 3, Mode: mode})
							es = entries(n)
							for _, e := range es {
								e.ETag = staleETag
							}
							return spread.Write(ctx, "log", es...)
						},
						Compete: func(ctx context.Context, kind string, req *http.Request) error {
							var errs []error
							for _, rk := range keysIn(req) {
								errs = append(errs, competeOn(ctx, raw, kind, spread.Partition("log", rk), rk))
							}
							return errors.Join(errs...)
						},
						Check: func(t *testing.T, kind string, err error) {
							notWritten := map[string]error{}
							var be *bucket.Error
							if err != nil {
								if !errors.As(err, &be) {
									t.Fatalf("Write: %v, want a *bucket.Error", err)
								}
								for _, o := range be.NotWritten {
									notWritten[o.RowKey] = o.Err
								}
								if len(be.NotWritten) == 0 {
									t.Fatalf("Write failed naming no entry: %v", err)
								}
							}
							got := stored(t, name)
							for _, e := range es {
								d, found := got[e.RowKey]
								ours := found && d.Properties["By"] == "me" && d.Properties["N"] == e.N
								if werr, failed := notWritten[e.RowKey]; failed {
									if ours && !errors.Is(werr, entity.ErrOutcomeUnknown) {
										t.Errorf("%s: reported not written (%v), but this Write's values are stored", e.RowKey, werr)
									}
									continue
								}
								if !ours {
									t.Errorf("%s: reported written, but the table holds %v (found %v)", e.RowKey, d.Properties, found)
								} else if e.ETag != d.ETag {
									// Also when its transaction's reply was
									// lost and it was found applied by reading
									// back: the ETag the raw read gives, never
									// empty, another version's or the stale one
									// it came with.
									t.Errorf("%s: given ETag %s, the table holds %s", e.RowKey, e.ETag, d.ETag)
								}
							}
						},
					}
				}})
			})
		}
	}
}

// staleETag is an ETag from an earlier read, which a written entry must
// not keep.
const staleETag = `W/"datetime'2020-01-01T00%3A00%3A00.0000000Z'"`

// competeOn is the second writer on (pk, rk), through a raw client: its
// entity has By "other".
func competeOn(ctx context.Context, raw *aztables.Client, kind, pk, rk string) error {
	body := []byte(fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"By":"other","N":99}`, pk, rk))
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

// One bad entry among many: an entry that cannot be stored (an invalid
// RowKey, one too large once encoded) refuses the Write before any request,
// naming it, and nothing is written; an entry the service refuses (Insert
// mode, its key already stored) fails alone — NotWritten names only it —
// and every other entry, in its bucket too, is written with its ETag.
func TestWriteOneBadEntryAmongMany(t *testing.T) {
	for name, bad := range map[string]*Tagged{
		"invalid key": {RowKey: "e/05", By: "me"},
		"too large":   {RowKey: "e05", By: strings.Repeat("x", 40_000)},
	} {
		t.Run(name, func(t *testing.T) {
			tn := createTable(t)
			s := newSpreadOf(t, newTagged(t, env, tn), bucket.Config{Buckets: 3})
			es := entries(8)
			es[5] = bad
			err := s.Write(t.Context(), "log", es...)
			var ae *bucket.ArgError
			if !errors.As(err, &ae) || ae.Value != "5" || !errors.Is(err, entity.ErrInvalid) {
				t.Fatalf("Write: %v, want an ArgError naming entry 5", err)
			}
			if n := len(stored(t, tn)); n != 0 {
				t.Fatalf("%d entities written though the Write was refused", n)
			}
		})
	}
	tn := createTable(t)
	s := newSpreadOf(t, newTagged(t, env, tn), bucket.Config{Buckets: 3, Mode: entity.OpInsert})
	if err := s.Write(t.Context(), "log", &Tagged{RowKey: "e04", By: "earlier"}); err != nil {
		t.Fatal(err)
	}
	es := entries(8)
	err := s.Write(t.Context(), "log", es...)
	var be *bucket.Error
	if !errors.As(err, &be) || len(be.NotWritten) != 1 || be.NotWritten[0].RowKey != "e04" || !errors.Is(be.NotWritten[0].Err, entity.ErrAlreadyExists) {
		t.Fatalf("Write: %v, want only e04 not written (already exists)", err)
	}
	got := stored(t, tn)
	for _, e := range es {
		d := got[e.RowKey]
		if e.RowKey == "e04" {
			if d.Properties["By"] != "earlier" {
				t.Errorf("e04 overwritten: %v", d.Properties)
			}
			continue
		}
		if d.Properties["By"] != "me" || e.ETag == "" || e.ETag != d.ETag {
			t.Errorf("%s: stored %v, ETag %q vs %q", e.RowKey, d.Properties, e.ETag, d.ETag)
		}
	}
}
