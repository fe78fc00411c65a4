package entity_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/cosmos"
	"github.com/tablekit/tablekit/integration/faults"
)

// cosmosEnv is env with the Cosmos DB profile on its table clients: env
// itself under TABLEKIT_PROFILE=cosmos, else a view adding the profile.
func cosmosEnv() *integration.Env {
	if env.Cosmos() {
		return env
	}
	return env.With(cosmos.New())
}

// TestCosmosTransactionOverAnIdenticalRow: a transaction whose first try
// failed on an entity another writer had stored exactly as this one sends
// it, and whose reply was lost, meets the same conflict on its resend.
// With ETags that carry no time (Cosmos DB's), nothing tells that stored
// entity from one the first try wrote: the transaction must not be
// reported written — its other inserts were never stored — but as
// ErrOutcomeUnknown (or refused). A transaction that was applied is still
// reported written, from its other inserts found as sent.
func TestCosmosTransactionOverAnIdenticalRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := faults.New(faults.Config{})
	opts := env.ClientOptions()
	f.SetEnabled(false)
	client := cosmosEnv().With(f).TableWith(t, entity.ClientOptions(opts))
	f.SetEnabled(true)
	people, err := entity.NewTable[Person](client)
	if err != nil {
		t.Fatal(err)
	}
	theirs := Person{Dept: "d", ID: "theirs", Name: "same"}
	if err := people.Insert(ctx, &theirs); err != nil {
		t.Fatal(err)
	}

	b := people.NewBatch()
	b.Insert(&Person{Dept: "d", ID: "mine", Name: "mine"})
	b.Insert(&Person{Dept: "d", ID: "theirs", Name: "same"})
	f.LoseNext(1, isBatch)
	_, err = people.Submit(ctx, b)
	if err == nil {
		t.Fatal("Submit reported a refused transaction written")
	}
	var te *entity.TransactionError
	if !errors.Is(err, entity.ErrOutcomeUnknown) && !errors.As(err, &te) {
		t.Fatalf("Submit: %v, want ErrOutcomeUnknown or a *TransactionError", err)
	}
	if f.Stats().LostReplies != 1 {
		t.Fatalf("the transaction's reply was not lost: %+v", f.Stats())
	}
	// Read back with a raw client: the transaction's other insert is absent.
	if _, err := env.TableService.NewClient(people.Name()).GetEntity(ctx, "d", "mine", nil); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("d/mine after the refused transaction: %v, want 404", err)
	}

	// Applied, reply lost: the resend fails on its first insert, which the
	// first try stored; its second insert, found as sent, tells.
	b = people.NewBatch()
	b.Insert(&Person{Dept: "d", ID: "a1", Name: "a"})
	b.Insert(&Person{Dept: "d", ID: "a2", Name: "a"})
	f.LoseNext(1, isBatch)
	if _, err := people.Submit(ctx, b); err != nil {
		t.Fatalf("applied transaction whose reply was lost: %v", err)
	}
	for _, rk := range []string{"a1", "a2"} {
		if _, err := env.TableService.NewClient(people.Name()).GetEntity(ctx, "d", rk, nil); err != nil {
			t.Fatalf("d/%s: %v", rk, err)
		}
	}
}

func isStatus(err error, status int) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == status
}

// inServiceOrder returns s as the test compares it with Table storage's
// order of results: as is, or sorted under the Cosmos DB profile, whose
// query results come in no order (the claim checked is then which rows
// come back, not their order).
func inServiceOrder[S ~[]E, E any](s S, cmp func(a, b E) int) S {
	if !env.Cosmos() {
		return s
	}
	return slices.SortedFunc(slices.Values(s), cmp)
}

func cmpKeys(a, b [2]string) int {
	return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]))
}

// TestCosmosFanOutByRowKeyKeepsEveryRow: under the Cosmos DB profile,
// whose pages are in no order, QueryPartitions with ByRowKey still yields
// every row of every partition once (the order is not kept: package doc).
func TestCosmosFanOutByRowKeyKeepsEveryRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	people, err := entity.NewTable[Person](cosmosEnv().Table(t))
	if err != nil {
		t.Fatal(err)
	}
	parts := []string{"b", "a", "c"}
	var all []Person
	var want []string
	for _, p := range parts {
		for i := range 40 {
			all = append(all, Person{Dept: p, ID: fmt.Sprintf("%04d", i), Name: "n"})
			want = append(want, p+"/"+fmt.Sprintf("%04d", i))
		}
	}
	if _, err := people.BulkWrite(ctx, all, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for p, err := range people.QueryPartitions(ctx, parts, entity.Query{PageSize: 7}, entity.FanOutOptions{ByRowKey: true, Concurrency: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Dept+"/"+p.ID)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("ByRowKey under Cosmos DB: %d rows, want each of the %d once", len(got), len(want))
	}
}

// TestCosmosBadRowsWithoutOrder: under the Cosmos DB profile, a query stops
// at the first undecodable row it meets (an error naming its keys, after
// only good rows), and with ContinueOnRowError yields every good row and
// a *RowError for each bad one — TestQueryContinuesPastBadRows's claims,
// in the order the service returns.
func TestCosmosBadRowsWithoutOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	people := badRowTable(t, []string{"a"}, 3, 7)
	people, err := entity.NewTableFromService[Person](cosmosEnv().TableService, people.Name())
	if err != nil {
		t.Fatal(err)
	}
	got := drainRows(people.Query(ctx, entity.Query{Filter: filter.PK("a"), PageSize: 3}))
	for i, r := range got {
		var re *entity.RowError
		last := i == len(got)-1
		switch {
		case last && (!errors.As(r.err, &re) || !errors.Is(r.err, entity.ErrDecode) || (re.RowKey != "r3" && re.RowKey != "r7")):
			t.Fatalf("default: the sequence ends with %+v, want the RowError of r3 or r7", r)
		case !last && (r.err != nil || r.age == 0):
			t.Fatalf("default: result %d = %+v before the first bad row", i, r)
		}
	}
	var good, bad []string
	for _, r := range drainRows(people.Query(ctx, entity.Query{Filter: filter.PK("a"), PageSize: 3, ContinueOnRowError: true})) {
		var re *entity.RowError
		if errors.As(r.err, &re) && errors.Is(r.err, entity.ErrDecode) && re.PartitionKey == "a" {
			bad = append(bad, re.RowKey)
			continue
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
		good = append(good, r.rk)
	}
	slices.Sort(good)
	slices.Sort(bad)
	if fmt.Sprint(good) != "[r0 r1 r2 r4 r5 r6 r8 r9]" || fmt.Sprint(bad) != "[r3 r7]" {
		t.Fatalf("ContinueOnRowError: rows %v, row errors %v", good, bad)
	}
}

// TestCosmosLimitsOfItsOwn: entity checks Table storage's limits before
// sending, not Cosmos DB's. An entity with a RowKey over 255 bytes, or a
// reserved property name, reaches Cosmos DB, which refuses it with 400:
// alone, or with its whole transaction in a BulkWrite, whose other
// partitions are written.
func TestCosmosLimitsOfItsOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	people, err := entity.NewTable[Person](cosmosEnv().Table(t))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("k", cosmos.MaxRowKeyBytes+1)
	if err := people.Insert(ctx, &Person{Dept: "d", ID: long}); !isStatus(err, http.StatusBadRequest) {
		t.Fatalf("Insert with a RowKey of %d bytes: %v, want the service's 400", len(long), err)
	}
	load := []Person{{Dept: "a", ID: "1"}, {Dept: "a", ID: long}, {Dept: "a", ID: "2"}, {Dept: "b", ID: "1"}}
	outs, err := people.BulkWrite(ctx, load, entity.BulkOptions{})
	var be *entity.BulkError
	if !errors.As(err, &be) {
		t.Fatalf("BulkWrite: %v, want a BulkError", err)
	}
	for i, o := range outs {
		if wantErr := load[i].Dept == "a"; (o.Err != nil) != wantErr {
			t.Errorf("item %d (%s/%.8s…): %v, want failed = %v", i, load[i].Dept, load[i].ID, o.Err, wantErr)
		}
	}
	if _, err := people.Get(ctx, "b", "1"); err != nil {
		t.Errorf("the other partition's entity: %v", err)
	}
	if _, err := people.Get(ctx, "a", "1"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("an entity of the refused transaction: %v, want ErrNotFound", err)
	}
	bags, err := entity.NewTable[entity.DynamicEntity](people.Client())
	if err != nil {
		t.Fatal(err)
	}
	if err := bags.Insert(ctx, &entity.DynamicEntity{PartitionKey: "d", RowKey: "id", Properties: map[string]any{"Id": "x"}}); !isStatus(err, http.StatusBadRequest) {
		t.Fatalf("Insert of a property named Id: %v, want the service's 400", err)
	}
}
