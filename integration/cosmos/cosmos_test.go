package cosmos_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/cosmos"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

type item struct {
	PartitionKey, RowKey string
	ETag                 string `table:",etag"`
	N                    int
}

type withID struct {
	PartitionKey, RowKey string
	Id                   string
}

// profiled is env with the profile on its table clients: env itself under
// TABLEKIT_PROFILE=cosmos (a second profile would undo the first's page
// order), else a view adding one.
func profiled() *integration.Env {
	if env.Cosmos() {
		return env
	}
	return env.With(cosmos.New())
}

func table[T any](t *testing.T) *entity.Table[T] {
	t.Helper()
	name := env.TableName(t)
	if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := entity.NewTableFromService[T](profiled().TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestETagsAreOpaqueAndStillWork(t *testing.T) {
	tbl := table[item](t)
	it := item{PartitionKey: "p", RowKey: "1", N: 1}
	if err := tbl.Insert(t.Context(), &it); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(it.ETag, `W/"`) || strings.Contains(it.ETag, "datetime") || len(it.ETag) != 36 {
		t.Fatalf("ETag %q is not opaque", it.ETag)
	}
	got, err := tbl.Get(t.Context(), "p", "1")
	if err != nil || got.ETag != it.ETag {
		t.Fatalf("Get: %q %v, want the insert's ETag", got.ETag, err)
	}
	stale := it
	it.N = 2
	if err := tbl.Update(t.Context(), &it, entity.Replace); err != nil {
		t.Fatalf("update with an opaque ETag: %v", err)
	}
	if err := tbl.Update(t.Context(), &stale, entity.Replace); !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Fatalf("update with a stale opaque ETag: %v", err)
	}
	b := tbl.NewBatch().Update(&it, entity.Replace).Insert(&item{PartitionKey: "p", RowKey: "2"})
	etags, err := tbl.Submit(t.Context(), b)
	if err != nil || len(etags) != 2 || strings.Contains(etags[0], "datetime") || etags[0] == "" {
		t.Fatalf("batch: %q %v", etags, err)
	}
	if err := tbl.Delete(t.Context(), "p", "1", etags[0]); err != nil {
		t.Fatalf("delete with the batch's opaque ETag: %v", err)
	}
}

func TestQueriesAreNotSorted(t *testing.T) {
	tbl := table[item](t)
	var all []item
	for i := range 5 {
		all = append(all, item{PartitionKey: fmt.Sprint(i % 2), RowKey: fmt.Sprint(i)})
	}
	if _, err := tbl.BulkWrite(t.Context(), all, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for it, err := range tbl.Query(t.Context(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, it.PartitionKey+it.RowKey)
	}
	if got := strings.Join(keys, " "); got != "13 11 04 02 00" {
		t.Fatalf("order %s, want the page reversed", got)
	}
}

func TestCosmosLimitsAreRefused(t *testing.T) {
	tbl := table[item](t)
	long := strings.Repeat("k", cosmos.MaxRowKeyBytes+1)
	if err := tbl.Insert(t.Context(), &item{PartitionKey: "p", RowKey: long}); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("RowKey of 256 bytes: %v, want 400", err)
	}
	if err := tbl.Insert(t.Context(), &item{PartitionKey: "p", RowKey: strings.Repeat("k", cosmos.MaxRowKeyBytes)}); err != nil {
		t.Fatalf("RowKey of 255 bytes: %v", err)
	}
	ids := table[withID](t)
	if err := ids.Insert(t.Context(), &withID{PartitionKey: "p", RowKey: "r", Id: "x"}); err == nil || !strings.Contains(err.Error(), "PropertyNameInvalid") {
		t.Fatalf("reserved name Id: %v", err)
	}
}

// The RowKey limit counts the key's bytes as stored, however the request
// carries it: a 255-byte key holding quotes (doubled, then percent-encoded
// in a $batch) is taken, and a 256-byte key holding '%' (decoded in a
// single-entity request's path) is refused.
func TestRowKeyLimitCountsStoredBytes(t *testing.T) {
	tbl := table[item](t)
	quoted := strings.Repeat("'", 5) + strings.Repeat("k", cosmos.MaxRowKeyBytes-5)
	b := tbl.NewBatch().Insert(&item{PartitionKey: "p", RowKey: "a"}).Upsert(&item{PartitionKey: "p", RowKey: quoted}, entity.Replace)
	if _, err := tbl.Submit(t.Context(), b); err != nil {
		t.Fatalf("a $batch with a 255-byte RowKey holding quotes: %v", err)
	}
	percent := "100%" + strings.Repeat("k", cosmos.MaxRowKeyBytes-3)
	if err := tbl.Upsert(t.Context(), &item{PartitionKey: "p", RowKey: percent}, entity.Replace); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("a 256-byte RowKey holding %%: %v, want 400", err)
	}
}
