package entity_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
)

// The seams: every public write of entity, with its reply lost and
// another writer inserting, replacing, merging or deleting the same
// entity inside azcore's retry window (faults.Injector.LoseNextThen runs
// it after the lost request was executed and before the resend). An
// applied write is never reported refused, a refused one never reported
// applied, and an ETag reported is never another writer's version.

// seamCase is one public write in one starting state.
type seamCase struct {
	name string
	// setup stores what the write starts from and returns the entity the
	// write works on (its ETag, when it has one, the stored one).
	setup func(t *testing.T, tbl *entity.Table[Person], pk, rk string) Person
	// write runs the write on p; etag is what it reports of the new
	// version ("" for none).
	write func(ctx context.Context, tbl *entity.Table[Person], p Person) (etag string, err error)
	match func(*http.Request) bool
	// applied says whether the write was applied by one of its tries when
	// the other writer did what competitor names.
	applied func(competitor string) bool
	// settles, when set, says where reading back must settle the outcome
	// (never ErrOutcomeUnknown).
	settles func(competitor string, tokens bool) bool
}

func always(string) bool { return true }
func never(string) bool  { return false }

// stored puts p in the table and returns it with its ETag.
func stored(t *testing.T, tbl *entity.Table[Person], pk, rk string) Person {
	t.Helper()
	p := Person{Dept: pk, ID: rk, Name: "before", Age: 1}
	if err := tbl.Insert(context.Background(), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func absent(_ *testing.T, _ *entity.Table[Person], pk, rk string) Person {
	return Person{Dept: pk, ID: rk}
}

// staleETag is an ETag no version has.
const staleETag = `W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`

func seamCases() []seamCase {
	mine := func(p Person) Person { p.Name, p.Age = "mine", 7; return p }
	return []seamCase{
		{"Insert", absent, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			p = mine(p)
			err := tbl.Insert(ctx, &p)
			return p.ETag, err
		}, isInsert, always, func(c string, tokens bool) bool { return c == "insert" || c == "delete" || (c == "merge" && tokens) }},
		{"Insert over an entity", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			p = mine(Person{Dept: p.Dept, ID: p.ID})
			err := tbl.Insert(ctx, &p)
			return p.ETag, err
		}, isInsert, func(c string) bool { return c == "delete" }, nil}, // the resend inserts it then
		{"Upsert merge", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			p = mine(Person{Dept: p.Dept, ID: p.ID})
			err := tbl.Upsert(ctx, &p, entity.Merge)
			return p.ETag, err
		}, isUpdate, always, func(string, bool) bool { return true }},
		{"Upsert replace", absent, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			p = mine(p)
			err := tbl.Upsert(ctx, &p, entity.Replace)
			return p.ETag, err
		}, isUpdate, always, func(string, bool) bool { return true }},
		{"Update merge", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			p = mine(p)
			err := tbl.Update(ctx, &p, entity.Merge)
			return p.ETag, err
		}, isUpdate, always, nil},
		{"Update replace", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			p = mine(p)
			err := tbl.Update(ctx, &p, entity.Replace)
			return p.ETag, err
		}, isUpdate, always, nil},
		{"Update with a stale ETag", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			p = mine(p)
			p.ETag = staleETag
			err := tbl.Update(ctx, &p, entity.Merge)
			return p.ETag, err
		}, isUpdate, never, nil},
		{"UpdateAny", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			p = mine(Person{Dept: p.Dept, ID: p.ID})
			err := tbl.UpdateAny(ctx, &p, entity.Replace)
			return p.ETag, err
		}, isUpdate, always, nil},
		{"Delete", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			return "", tbl.Delete(ctx, p.Dept, p.ID, p.ETag)
		}, isDelete, always, nil},
		{"Delete with a stale ETag", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			return "", tbl.Delete(ctx, p.Dept, p.ID, staleETag)
		}, isDelete, never, nil},
		{"DeleteEntity", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			return "", tbl.DeleteEntity(ctx, &p)
		}, isDelete, always, nil},
		{"DeleteIfExists", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			deleted, err := tbl.DeleteIfExists(ctx, p.Dept, p.ID)
			if err == nil && !deleted {
				return "", entity.ErrNotFound // reported: nothing deleted
			}
			return "", err
		}, isDelete, always, nil},
		{"Modify", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			m, err := tbl.Modify(ctx, p.Dept, p.ID, func(p *Person) error { p.Name, p.Age = "mine", 7; return nil }, entity.ModifyOptions{Retry: entity.RetryPolicy{Attempts: 3}})
			return m.ETag, err
		}, isUpdate, always, nil}, // its first try, or a later round
		{"Submit", absent, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			p = mine(p)
			other := Person{Dept: p.Dept, ID: p.ID + "-other", Name: "mine"}
			etags, err := tbl.Submit(ctx, tbl.NewBatch().Insert(&p).Insert(&other))
			if err == nil && (etags[0] != p.ETag || etags[1] != other.ETag) {
				return "", fmt.Errorf("returned ETags %q, written back %q %q", etags, p.ETag, other.ETag)
			}
			return p.ETag, err
		}, isBatch, always, func(comp string, tokens bool) bool {
			// The other entity tells — unless the resend fails on it, once
			// theirs deleted this one, and its ETag has no time to show the
			// first try stored it (Cosmos DB): then nothing tells.
			return tokens || !env.Cosmos() || comp != "delete"
		}},
		{"Submit with a stale ETag", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			p = mine(p)
			p.ETag = staleETag
			other := Person{Dept: p.Dept, ID: p.ID + "-other", Name: "mine"}
			_, err := tbl.Submit(ctx, tbl.NewBatch().Insert(&other).Update(&p, entity.Merge))
			return p.ETag, err
		}, isBatch, never, nil},
		{"BulkWrite insert", absent, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			return bulkOne(ctx, tbl, mine(p), entity.OpInsert)
		}, isBatch, always, func(string, bool) bool { return true }},
		{"BulkWrite upsert", stored, func(ctx context.Context, tbl *entity.Table[Person], p Person) (string, error) {
			return bulkOne(ctx, tbl, mine(Person{Dept: p.Dept, ID: p.ID}), entity.OpUpsertReplace)
		}, isBatch, always, func(string, bool) bool { return true }},
	}
}

// bulkOne bulk-writes p among two others of its partition and returns
// p's outcome.
func bulkOne(ctx context.Context, tbl *entity.Table[Person], p Person, mode entity.OpKind) (string, error) {
	in := []Person{{Dept: p.Dept, ID: p.ID + "-a", Name: "mine"}, p, {Dept: p.Dept, ID: p.ID + "-b", Name: "mine"}}
	outcomes, _ := tbl.BulkWrite(ctx, in, entity.BulkOptions{Mode: mode})
	for i, o := range outcomes {
		if i != 1 && o.Err != nil && !errors.Is(o.Err, entity.ErrOutcomeUnknown) {
			return "", fmt.Errorf("entity %d, not contested: %w", i, o.Err)
		}
	}
	return outcomes[1].ETag, outcomes[1].Err
}

// competitors are the other writer's writes, through a client without
// the injector; a write the entity's state refuses changes nothing.
var competitors = map[string]func(ctx context.Context, raw *aztables.Client, pk, rk string) error{
	"insert": func(ctx context.Context, raw *aztables.Client, pk, rk string) error {
		_, err := raw.AddEntity(ctx, theirs(pk, rk), nil)
		return err
	},
	"replace": func(ctx context.Context, raw *aztables.Client, pk, rk string) error {
		_, err := raw.UpdateEntity(ctx, theirs(pk, rk), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: to(azcore.ETagAny)})
		return err
	},
	"merge": func(ctx context.Context, raw *aztables.Client, pk, rk string) error {
		_, err := raw.UpdateEntity(ctx, theirs(pk, rk), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: to(azcore.ETagAny)})
		return err
	},
	"delete": func(ctx context.Context, raw *aztables.Client, pk, rk string) error {
		_, err := raw.DeleteEntity(ctx, pk, rk, nil)
		return err
	},
}

func to[T any](v T) *T { return &v }

func theirs(pk, rk string) []byte {
	b, _ := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": rk, "Name": "theirs", "Email": "theirs@x"})
	return b
}

// verdict classifies what a write reported.
func verdict(err error) string {
	switch {
	case err == nil:
		return "done"
	case errors.Is(err, entity.ErrOutcomeUnknown):
		return "unknown"
	case errors.Is(err, entity.ErrAlreadyExists), errors.Is(err, entity.ErrPreconditionFailed), errors.Is(err, entity.ErrNotFound):
		return "refused"
	}
	return "error"
}

// TestSeamsLostReplyWithAnotherWriter runs every public write with its
// reply lost and each kind of competing write in the retry window, with
// and without write tokens, and checks each report against the truth and
// the stored state (read with a raw client).
func TestSeamsLostReplyWithAnotherWriter(t *testing.T) {
	t.Parallel()
	names := make([]string, 0, len(competitors))
	for c := range competitors {
		names = append(names, c)
	}
	sort.Strings(names)
	var mu sync.Mutex
	matrix := map[string]string{}
	var wg sync.WaitGroup
	for _, tokens := range []bool{false, true} {
		wg.Add(1)
		t.Run(fmt.Sprint("tokens=", tokens), func(t *testing.T) {
			defer wg.Done()
			t.Parallel()
			ctx := context.Background()
			f := faults.New(faults.Config{})
			tbl := faultyTable[Person](t, f, 2)
			if tokens {
				tbl = tbl.WithWriteTokens()
			}
			raw := env.TableService.NewClient(tbl.Name())
			for ci, c := range seamCases() {
				for _, comp := range names {
					pk, rk := fmt.Sprintf("c%02d-%s", ci, comp), "e'"+comp
					f.SetEnabled(false)
					p := c.setup(t, tbl, pk, rk)
					f.SetEnabled(true)
					var compErr error
					lost := f.Stats().LostReplies
					f.LoseNextThen(1, c.match, func(*http.Request) { compErr = competitors[comp](ctx, raw, pk, rk) })
					etag, err := c.write(ctx, tbl, p)
					if f.Stats().LostReplies == lost {
						t.Fatalf("%s/%s: no reply lost", c.name, comp)
					}
					applied := c.applied(comp)
					v := verdict(err)
					cell := v
					if compErr != nil {
						cell += " (theirs refused)"
					}
					mu.Lock()
					matrix[fmt.Sprintf("%-26s %-8s tokens=%v", c.name, comp, tokens)] = cell
					mu.Unlock()
					row := rawRow(t, raw, pk, rk)
					switch {
					case v == "error":
						t.Errorf("%s / their %s: unexpected error: %v", c.name, comp, err)
					case applied && v == "refused":
						t.Errorf("%s / their %s: applied, reported refused: %v", c.name, comp, err)
					case !applied && v == "done":
						t.Errorf("%s / their %s: not applied, reported done (stored %v)", c.name, comp, row)
					case c.settles != nil && c.settles(comp, tokens) && v == "unknown":
						t.Errorf("%s / their %s: reading back can tell, reported unknown: %v", c.name, comp, err)
					}
					// An ETag reported names this write's version, never
					// theirs (Modify returns the entity as read, later
					// writes included, with that version's ETag).
					if v == "done" && etag != "" && c.name != "Modify" && row != nil && row["odata.etag"] == etag && row["Name"] != "mine" {
						t.Errorf("%s / their %s: reported ETag %q is the version %v", c.name, comp, etag, row)
					}
					if err != nil && strings.Contains(err.Error(), "\n") {
						t.Errorf("%s: %q", c.name, err)
					}
				}
			}
		})
	}
	t.Cleanup(func() {
		wg.Wait()
		keys := make([]string, 0, len(matrix))
		for k := range matrix {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s  %s\n", k, matrix[k])
		}
		t.Logf("outcomes reported (write, their write, tokens):\n%s", b.String())
	})
}

// badItems are entities the service would refuse, each found while
// encoding, before any request.
var badItems = map[string]func(pk string) entity.DynamicEntity{
	"string too long": func(pk string) entity.DynamicEntity {
		return entity.DynamicEntity{PartitionKey: pk, RowKey: "bad", Properties: map[string]any{"Name": strings.Repeat("x", 40000)}}
	},
	"entity over 1 MiB once encoded": func(pk string) entity.DynamicEntity {
		props := map[string]any{}
		for i := range 20 {
			props[fmt.Sprint("B", i)] = make([]byte, 60<<10)
		}
		return entity.DynamicEntity{PartitionKey: pk, RowKey: "bad", Properties: props}
	},
	"RowKey with /": func(pk string) entity.DynamicEntity {
		return entity.DynamicEntity{PartitionKey: pk, RowKey: "a/b"}
	},
	"PartitionKey with a control character": func(string) entity.DynamicEntity {
		return entity.DynamicEntity{PartitionKey: "p\tq", RowKey: "bad"}
	},
	"property name": func(pk string) entity.DynamicEntity {
		return entity.DynamicEntity{PartitionKey: pk, RowKey: "bad", Properties: map[string]any{"not a name": 1}}
	},
	"value of no EDM type": func(pk string) entity.DynamicEntity {
		return entity.DynamicEntity{PartitionKey: pk, RowKey: "bad", Properties: map[string]any{"C": make(chan int)}}
	},
}

// TestSeamsOneBadItemAmongMany: one entity the service would refuse,
// among 202 good ones over two partitions, fails alone in BulkWrite
// (every mode), before any request: the good ones go out in exactly the
// transactions they need, none of which carries it. Submit refuses the
// whole transaction before any request, naming the operation and the
// entity's keys.
func TestSeamsOneBadItemAmongMany(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	count := faults.New(faults.Config{}) // loses nothing: counts requests
	bags := faultyTable[entity.DynamicEntity](t, count, 2)
	raw := env.TableService.NewClient(bags.Name())
	n := 0
	for name, bad := range badItems {
		for _, mode := range []entity.OpKind{entity.OpUpsertReplace, entity.OpUpsertMerge, entity.OpInsert} {
			n++
			pks := [2]string{fmt.Sprint("a", n), fmt.Sprint("b", n)}
			var in []entity.DynamicEntity
			for i := range 202 {
				in = append(in, entity.DynamicEntity{PartitionKey: pks[i%2], RowKey: fmt.Sprintf("r%03d", i), Properties: map[string]any{"N": int32(i)}})
			}
			in = slices.Insert(in, 100, bad(pks[0]))
			before := count.Stats().Requests
			outcomes, err := bags.BulkWrite(ctx, in, entity.BulkOptions{Mode: mode})
			sent := count.Stats().Requests - before
			var be *entity.BulkError
			var ve *entity.ValidationError
			if !errors.As(err, &be) || be.Failed != 1 || !errors.Is(outcomes[100].Err, entity.ErrInvalid) || !errors.As(outcomes[100].Err, &ve) {
				t.Fatalf("%s, %v: %v; the bad one: %v", name, mode, err, outcomes[100].Err)
			}
			for i, o := range outcomes {
				if i != 100 && (o.Err != nil || o.ETag == "") {
					t.Fatalf("%s, %v: outcome %d: %+v", name, mode, i, o)
				}
			}
			// 101 entities per partition: two transactions each, no retry.
			if sent != 4 {
				t.Errorf("%s, %v: %d requests, want 4", name, mode, sent)
			}
			for _, pk := range pks {
				if got := len(rawPartition(t, raw, pk)); got != 101 {
					t.Fatalf("%s, %v: %d stored in %s", name, mode, got, pk)
				}
			}
		}

		// A transaction is all or nothing: refused whole, before sending.
		pk := fmt.Sprint("tx", n)
		b := bags.NewBatch()
		for i := range 10 {
			e := entity.DynamicEntity{PartitionKey: pk, RowKey: fmt.Sprint("r", i)}
			b.Insert(&e)
		}
		e := bad(pk)
		b.Upsert(&e, entity.Replace)
		before := count.Stats().Requests
		_, err := bags.Submit(ctx, b)
		var be *entity.BatchError
		if !errors.As(err, &be) || be.Index != 10 || !errors.Is(err, entity.ErrInvalid) || count.Stats().Requests != before {
			t.Fatalf("%s: Submit: %v (%d requests)", name, err, count.Stats().Requests-before)
		}
		// It names the entity, not only its place in the transaction.
		if be.PartitionKey != e.PartitionKey || be.RowKey != e.RowKey || !strings.Contains(err.Error(), "RowKey "+strconv.Quote(e.RowKey)) {
			t.Fatalf("%s: Submit: %v names keys %q/%q, want %q/%q", name, err, be.PartitionKey, be.RowKey, e.PartitionKey, e.RowKey)
		}
		if got := rawPartition(t, raw, pk); len(got) != 0 {
			t.Fatalf("%s: Submit refused, %d stored", name, len(got))
		}
	}
}

// rawPartition lists a partition with a raw aztables client.
func rawPartition(t *testing.T, client *aztables.Client, pk string) [][]byte {
	t.Helper()
	f := "PartitionKey eq '" + strings.ReplaceAll(pk, "'", "''") + "'"
	var out [][]byte
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &f})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Entities...)
	}
	return out
}
