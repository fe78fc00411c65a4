package resolver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/seamtest"
	"github.com/tablekit/tablekit/resolver"
)

// migrationRows stores n v1 customers over two partitions, keys c00…, on a
// new table, with raw v1 bodies (EntityType Customer.v1), and returns the
// table's name.
func migrationRows(t *testing.T, n int) string {
	t.Helper()
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = env.TableService.DeleteTable(context.Background(), name, nil) })
	raw := env.TableService.NewClient(name)
	for i := range n {
		if _, err := raw.AddEntity(t.Context(), v1Body(i, fmt.Sprintf("Ann%d Lee", i), 0), nil); err != nil {
			t.Fatal(err)
		}
	}
	return name
}

func rowPK(i int) string { return fmt.Sprintf("p%d", i%2) }
func rowRK(i int) string { return fmt.Sprintf("c%02d", i) }

func v1Body(i int, name string, edits int64) []byte {
	return fmt.Appendf(nil, `{"PartitionKey":%q,"RowKey":%q,"EntityType":"Customer.v1","Name":%q,"Edits@odata.type":"Edm.Int64","Edits":"%d"}`, rowPK(i), rowRK(i), name, edits)
}

// storedRow reads row i with the raw client as a property bag.
func storedRow(t *testing.T, raw *aztables.Client, i int) (entity.DynamicEntity, bool) {
	t.Helper()
	resp, err := raw.GetEntity(t.Context(), rowPK(i), rowRK(i), nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
		return entity.DynamicEntity{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var d entity.DynamicEntity
	if err := entity.Unmarshal(resp.Value, &d); err != nil {
		t.Fatal(err)
	}
	return d, true
}

// checkUpgraded fails t unless row i is stored as v2 with the split of
// name and the given edits.
func checkUpgraded(t *testing.T, raw *aztables.Client, i int, name string, edits int64) {
	t.Helper()
	d, found := storedRow(t, raw, i)
	first, last, _ := strings.Cut(name, " ")
	if !found || d.Properties["EntityType"] != "Customer.v2" || d.Properties["First"] != first || d.Properties["Last"] != last || d.Properties["Edits"] != edits {
		t.Errorf("row %d: stored %v (found %v), want Customer.v2 %q %q with %d edits", i, d.Properties, found, first, last, edits)
	}
	if _, old := d.Properties["Name"]; old {
		t.Errorf("row %d keeps the v1 property Name", i)
	}
}

func migrateTable(t *testing.T, e *integration.Env, name string) *resolver.Table {
	t.Helper()
	_, v2 := customerSchemas(t)
	tbl, err := resolver.NewTable(e.TableService.NewClient(name), v2)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// Migrate killed at every request — before it is sent and after the
// service executed it — and run again by a fresh Table from the last
// checkpoint it recorded (or from the start): every row ends upgraded,
// once, and a third run upgrades nothing.
func TestMigrateSurvivesACrashAtEveryRequest(t *testing.T) {
	const n = 6
	crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		name := migrationRows(t, n)
		var token string
		return crashtest.Run{
			Work: func(ctx context.Context, v *integration.Env) error {
				_, err := migrateTable(t, v, name).Migrate(ctx, resolver.MigrateOptions{PageSize: 4,
					Checkpoint: func(c resolver.MigrateCheckpoint) error { token = c.Token; return nil }})
				return err
			},
			Recover: func(ctx context.Context) error {
				_, err := migrateTable(t, env, name).Migrate(ctx, resolver.MigrateOptions{PageSize: 4, Resume: token})
				return err
			},
			Check: func(t *testing.T) {
				raw := env.TableService.NewClient(name)
				for i := range n {
					checkUpgraded(t, raw, i, fmt.Sprintf("Ann%d Lee", i), 0)
				}
				rep, err := migrateTable(t, env, name).Migrate(t.Context(), resolver.MigrateOptions{})
				if err != nil || rep.Upgraded != 0 || rep.Current != n {
					t.Errorf("a run after recovery: %+v %v, want %d current", rep, err, n)
				}
			},
		}
	}})
}

// addsUp fails t unless rep counts every row it read once:
// Read = Upgraded + Current + Unknown + Gone + len(Failed).
func addsUp(t *testing.T, what string, rep resolver.MigrateReport) {
	t.Helper()
	if sum := rep.Upgraded + rep.Current + rep.Unknown + rep.Gone + int64(len(rep.Failed)); rep.Read != sum {
		t.Errorf("%s: Read %d, but Upgraded+Current+Unknown+Gone+Failed = %d: %+v", what, rep.Read, sum, rep)
	}
}

// The report of a migration that stops adds up, and added to the report
// of the run resumed from its last checkpoint counts each row once. First
// 50 v1 rows read in one page of 50, every request after the page read
// failing (the process killed, the service gone): the report counts
// nothing (it counted the page as Read and nothing else). Then killed at
// every request — before it is sent and once the service executed it —
// over three pages: the stopped report is its last checkpoint's, the sum
// of it and the resumed run's reads every row once and finds each
// Upgraded or Current once, and every row is stored upgraded (read back
// raw).
func TestMigrateReportOfAStoppedRunAddsUp(t *testing.T) {
	t.Run("the page read, then nothing", func(t *testing.T) {
		const n = 50
		name := migrationRows(t, n)
		dead := crashtest.NewKiller(1)
		rep, err := migrateTable(t, env.With(dead).WithOptions(noRetries), name).Migrate(t.Context(), resolver.MigrateOptions{PageSize: 50})
		if err == nil || !dead.Fired() {
			t.Fatalf("a migration whose writes all failed: %+v, %v", rep, err)
		}
		addsUp(t, "stopped", rep)
		if rep.Read != 0 {
			t.Errorf("the stopped run counts %d rows of a page it did not finish: %+v", rep.Read, rep)
		}
		again, err := migrateTable(t, env, name).Migrate(t.Context(), resolver.MigrateOptions{PageSize: 50})
		if err != nil || again.Read != n || again.Upgraded != n {
			t.Fatalf("resumed run: %+v, %v", again, err)
		}
		if total := rep.Read + again.Read; total != n {
			t.Errorf("the two reports read %d rows, want %d", total, n)
		}
	})
	t.Run("killed at every request", func(t *testing.T) {
		const n = 10
		crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
			name := migrationRows(t, n)
			var (
				token           string
				last            resolver.MigrateReport // the last checkpoint's
				stopped, resume resolver.MigrateReport
				stoppedErr      error
			)
			return crashtest.Run{
				Work: func(ctx context.Context, v *integration.Env) error {
					stopped, stoppedErr = migrateTable(t, v, name).Migrate(ctx, resolver.MigrateOptions{PageSize: 4,
						Checkpoint: func(c resolver.MigrateCheckpoint) error { token, last = c.Token, c.Report; return nil }})
					return stoppedErr
				},
				Recover: func(ctx context.Context) error {
					if stoppedErr == nil {
						return nil // done: nothing to resume
					}
					var err error
					resume, err = migrateTable(t, env, name).Migrate(ctx, resolver.MigrateOptions{PageSize: 4, Resume: token})
					return err
				},
				Check: func(t *testing.T) {
					addsUp(t, "stopped", stopped)
					addsUp(t, "resumed", resume)
					if stoppedErr != nil && (stopped.Read != last.Read || stopped.Upgraded != last.Upgraded || stopped.Current != last.Current) {
						t.Errorf("the stopped run reports %+v, its last checkpoint %+v", stopped, last)
					}
					read := stopped.Read + resume.Read
					found := stopped.Upgraded + stopped.Current + resume.Upgraded + resume.Current
					if read != n || found != n {
						t.Errorf("stopped %+v and resumed %+v read %d rows and find %d upgraded or current, want %d of each", stopped, resume, read, found, n)
					}
					raw := env.TableService.NewClient(name)
					for i := range n {
						checkUpgraded(t, raw, i, fmt.Sprintf("Ann%d Lee", i), 0)
					}
				},
			}
		}})
	})
}

var rowInRequest = regexp.MustCompile(`RowKey(?:='|%27|":")(c0[0-9])`)

// rowsIn are the rows (numbers) a request names, in its URL or body; a
// query names every row of n.
func rowsIn(req *http.Request, n int) []int {
	text := req.URL.String()
	if req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			body, _ := io.ReadAll(b)
			text += string(body)
		}
	}
	var out []int
	for _, m := range rowInRequest.FindAllStringSubmatch(text, -1) {
		k := m[1]
		var i int
		fmt.Sscanf(k, "c%02d", &i)
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	if len(out) == 0 && req.Method == http.MethodGet {
		for i := range n {
			out = append(out, i)
		}
	}
	return out
}

// Migrate with the reply of each request lost in turn and another writer
// inserting, replacing (with a v1 row of another name), merging (an edit)
// or deleting the rows of that request before azcore's resend: the
// migration succeeds, a deleted row stays deleted, and every other row ends
// upgraded from what the other writer left — its change kept, never
// overwritten.
func TestMigrateBesideAnotherWriter(t *testing.T) {
	const n = 6
	seamtest.EveryReply(t, env, seamtest.Race{Prepare: func(t *testing.T) seamtest.RaceRun {
		name := migrationRows(t, n)
		raw := env.TableService.NewClient(name)
		var mu sync.Mutex
		touched := map[int]string{} // row → the other writer's kind
		var rep resolver.MigrateReport
		return seamtest.RaceRun{
			Work: func(ctx context.Context, v *integration.Env) error {
				var err error
				rep, err = migrateTable(t, v, name).Migrate(ctx, resolver.MigrateOptions{PageSize: 4})
				return err
			},
			Compete: func(ctx context.Context, kind string, req *http.Request) error {
				var errs []error
				for _, i := range rowsIn(req, n) {
					var err error
					switch kind {
					case seamtest.Insert:
						_, err = raw.AddEntity(ctx, v1Body(i, "Other Person", 0), nil)
					case seamtest.Replace:
						_, err = raw.UpsertEntity(ctx, v1Body(i, "Other Person", 7), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
					case seamtest.Merge:
						_, err = raw.UpdateEntity(ctx, fmt.Appendf(nil, `{"PartitionKey":%q,"RowKey":%q,"Edits@odata.type":"Edm.Int64","Edits":"99"}`, rowPK(i), rowRK(i)),
							&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
					case seamtest.Delete:
						_, err = raw.DeleteEntity(ctx, rowPK(i), rowRK(i), nil)
					}
					if err == nil {
						mu.Lock()
						touched[i] = kind
						mu.Unlock()
					}
					errs = append(errs, err)
				}
				return errors.Join(errs...)
			},
			Check: func(t *testing.T, kind string, err error) {
				if err != nil {
					t.Fatalf("migrate: %+v %v", rep, err)
				}
				deleted := 0
				for i := range n {
					name := fmt.Sprintf("Ann%d Lee", i)
					switch touched[i] {
					case seamtest.Delete:
						deleted++
						if d, found := storedRow(t, raw, i); found {
							t.Errorf("row %d, deleted by the other writer, is back: %v", i, d.Properties)
						}
					case seamtest.Replace:
						// Upgraded from the other writer's row — or that
						// v1 row itself, written after the migration's
						// own write of it: the next run upgrades it.
						if d, _ := storedRow(t, raw, i); d.Properties["Name"] != "Other Person" || d.Properties["Edits"] != int64(7) {
							checkUpgraded(t, raw, i, "Other Person", 7)
						}
					case seamtest.Merge:
						checkUpgraded(t, raw, i, name, 99)
					default:
						checkUpgraded(t, raw, i, name, 0)
					}
				}
				if rep.Upgraded+rep.Current+rep.Gone != rep.Read || rep.Read < int64(n-deleted) {
					t.Errorf("report %+v does not account for the rows read", rep)
				}
				if kind == "" || kind == seamtest.Insert {
					// Nobody else changed anything: every row is this
					// run's upgrade, whatever reply was lost.
					if rep.Upgraded != n {
						t.Errorf("report %+v, want all %d rows upgraded by this run", rep, n)
					}
				}
				again, err := migrateTable(t, env, name).Migrate(t.Context(), resolver.MigrateOptions{})
				if err != nil || again.Current != again.Read-again.Upgraded {
					t.Fatalf("a second run: %+v %v", again, err)
				}
				for i := range n {
					if touched[i] == seamtest.Replace {
						checkUpgraded(t, raw, i, "Other Person", 7)
					}
				}
			},
		}
	}})
}

// hook is a per-retry policy that runs fn once, before the first request
// that match selects is sent.
type hook struct {
	once  sync.Once
	match func(*http.Request) bool
	fn    func()
}

func (h *hook) Do(req *policy.Request) (*http.Response, error) {
	if h.match(req.Raw()) {
		h.once.Do(h.fn)
	}
	return req.Next()
}

func isWrite(r *http.Request) bool { return r.Method != http.MethodGet }

// A row deleted between Migrate's read and its write is counted Gone and
// not written back; a row changed meanwhile (its v1 name edited) is read
// again and upgraded from the change; the rest of its transaction is
// upgraded.
func TestMigrateRowDeletedOrChangedBetweenReadAndWrite(t *testing.T) {
	const n = 6
	name := migrationRows(t, n)
	raw := env.TableService.NewClient(name)
	h := &hook{match: isWrite, fn: func() {
		if _, err := raw.DeleteEntity(context.Background(), rowPK(0), rowRK(0), nil); err != nil {
			t.Error(err)
		}
		if _, err := raw.UpsertEntity(context.Background(), v1Body(2, "Bob Ray", 3), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
			t.Error(err)
		}
	}}
	rep, err := migrateTable(t, env.With(h), name).Migrate(t.Context(), resolver.MigrateOptions{})
	if err != nil {
		t.Fatalf("migrate: %+v %v", rep, err)
	}
	if rep.Gone != 1 || rep.Upgraded != n-1 {
		t.Errorf("report %+v, want 1 gone and %d upgraded", rep, n-1)
	}
	if d, found := storedRow(t, raw, 0); found {
		t.Errorf("the deleted row is back: %v", d.Properties)
	}
	checkUpgraded(t, raw, 2, "Bob Ray", 3)
	for _, i := range []int{1, 3, 4, 5} {
		checkUpgraded(t, raw, i, fmt.Sprintf("Ann%d Lee", i), 0)
	}
}

type Gadget struct {
	PartitionKey, RowKey string
	ETag                 string `table:",etag"`
	Label                string
	Blob                 string
}

type GadgetV1 struct {
	PartitionKey, RowKey string
	Name                 string
}

// One bad row among many — its upgrade function errors, panics, or makes
// a row too large once encoded; another row does not decode — fails
// alone, named with its keys and left as it is; every other row, in the
// same partition and transaction, is upgraded. Rows are told apart by
// their RowKey prefix (resolver.ByRowKeyPrefix), with a version property.
func TestMigrateOneBadRowAmongMany(t *testing.T) {
	old, err := resolver.NewSchema(resolver.Config{Discriminator: resolver.ByRowKeyPrefix("_")}, resolver.Register[GadgetV1]("Gadget.v1"))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := resolver.NewSchema(resolver.Config{Discriminator: resolver.ByRowKeyPrefix("_")}, resolver.Register[Gadget]("Gadget.v2"),
		resolver.Upgrade("Gadget.v1", func(g *GadgetV1) (*Gadget, error) {
			switch g.Name {
			case "error":
				return nil, errors.New("cannot upgrade this one")
			case "panic":
				panic("upgrade of " + g.RowKey)
			case "huge":
				// 40,000 characters are 80,000 bytes in UTF-16: over the
				// 64 KiB of a property once encoded.
				return &Gadget{Label: g.Name, Blob: strings.Repeat("x", 40_000)}, nil
			}
			return &Gadget{Label: strings.ToUpper(g.Name)}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	client := env.Table(t)
	oldTbl, err := resolver.NewTable(client, old)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"03": "error", "05": "panic", "07": "huge"}
	b := oldTbl.NewBatch()
	for i := range 12 {
		id := fmt.Sprintf("%02d", i)
		n := names[id]
		if n == "" {
			n = "g" + id
		}
		b.Insert(&GadgetV1{PartitionKey: "p", RowKey: id, Name: n})
	}
	if _, err := oldTbl.Submit(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	// Row 09 is made undecodable: its Name stored as a number.
	raw := client
	if _, err := raw.UpdateEntity(t.Context(), []byte(`{"PartitionKey":"p","RowKey":"Gadget_09","EntityType":"Gadget.v1","Name":7}`), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: ptrETag(azcore.ETagAny)}); err != nil {
		t.Fatal(err)
	}
	tbl, err := resolver.NewTable(client, cur)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := tbl.Migrate(t.Context(), resolver.MigrateOptions{})
	var me *resolver.MigrateError
	if !errors.As(err, &me) {
		t.Fatalf("migrate: %+v %v, want a MigrateError", rep, err)
	}
	var failed []string
	for _, f := range rep.Failed {
		failed = append(failed, f.RowKey)
		if f.PartitionKey != "p" {
			t.Errorf("failure %v does not name its PartitionKey", f)
		}
	}
	slices.Sort(failed)
	if want := []string{"Gadget_03", "Gadget_05", "Gadget_07", "Gadget_09"}; !slices.Equal(failed, want) {
		t.Fatalf("failed %q, want %q (report %+v)", failed, want, rep)
	}
	if rep.Upgraded != 8 {
		t.Errorf("upgraded %d, want the 8 good rows", rep.Upgraded)
	}
	for i := range 12 {
		id := fmt.Sprintf("%02d", i)
		resp, err := raw.GetEntity(t.Context(), "p", "Gadget_"+id, nil)
		if err != nil {
			t.Fatal(err)
		}
		var d entity.DynamicEntity
		if err := entity.Unmarshal(resp.Value, &d); err != nil {
			t.Fatal(err)
		}
		bad := names[id] != "" || id == "09"
		if want := map[bool]string{true: "Gadget.v1", false: "Gadget.v2"}[bad]; d.Properties["EntityType"] != want {
			t.Errorf("row %s stored as %v, want %s", id, d.Properties["EntityType"], want)
		}
		if !bad && d.Properties["Label"] != strings.ToUpper("g"+id) {
			t.Errorf("row %s: %v", id, d.Properties)
		}
	}
}

func ptrETag(e azcore.ETag) *azcore.ETag { return &e }
