package entity_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

// offlinePeople is a table at an address nothing listens on: a request
// would fail, so a test passing through it proves none was sent.
func offlinePeople(t *testing.T, name string) *entity.Table[Person] {
	t.Helper()
	client, err := aztables.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/"+name, entity.ClientOptions(env.NoRetryClientOptions()))
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := entity.NewTable[Person](client)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestBatchRules(t *testing.T) {
	offline := offlinePeople(t, "nowhere")
	p := func(pk, rk string) *Person { return &Person{Dept: pk, ID: rk, Name: "n"} }
	many := func(n int) *entity.Batch {
		b := offline.NewBatch()
		for i := 0; i < n; i++ {
			b.Insert(p("p", keys.Pad(int64(i), 3)))
		}
		return b
	}
	big := strings.Repeat("x", 30000)
	huge := offline.NewBatch()
	for i := 0; i < 100; i++ {
		huge.Insert(&entity.DynamicEntity{PartitionKey: "p", RowKey: keys.Pad(int64(i), 3), Properties: map[string]any{"A": big, "B": big}})
	}
	cases := map[string]struct {
		b     *entity.Batch
		index int
	}{
		"empty":              {offline.NewBatch(), -1},
		"101 operations":     {many(101), 100},
		"two partitions":     {offline.NewBatch().Insert(p("a", "1")).Insert(p("b", "2")), 1},
		"entity twice":       {offline.NewBatch().Insert(p("a", "1")).Delete("a", "1", entity.AnyETag), 1},
		"over 4 MiB":         {huge, -1},
		"invalid entity":     {offline.NewBatch().Insert(p("a", "1")).Insert(p("a", "b/c")), 1},
		"invalid delete key": {offline.NewBatch().Delete("a", "#", entity.AnyETag), 0},
	}
	for name, c := range cases {
		err := c.b.Validate()
		var be *entity.BatchError
		if !errors.Is(err, entity.ErrInvalid) || !errors.As(err, &be) || be.Index != c.index {
			t.Errorf("%s: got %v, want a BatchError at %d", name, err, c.index)
		}
		// Submit refuses it before any request.
		if _, err := offline.Submit(context.Background(), c.b); !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%s: Submit sent an invalid batch: %v", name, err)
		}
	}
	if err := many(100).Validate(); err != nil {
		t.Errorf("100 operations: %v", err)
	}
	var notPtr struct{ PartitionKey, RowKey string }
	if err := offline.NewBatch().Insert(notPtr).Validate(); !errors.Is(err, entity.ErrInvalidType) {
		t.Errorf("non-pointer: %v", err)
	}
	// Every key the service allows is valid in every operation (a client
	// without tablekit's policies refuses some when submitting: see
	// TestTransactionsWithoutThePolicies).
	for name, b := range map[string]*entity.Batch{
		"quote in insert key": offline.NewBatch().Insert(p("a", "O'Brien")),
		"quote in merge key":  offline.NewBatch().UpdateAny(p("a", "O'Brien"), entity.Merge),
		"empty pk delete":     offline.NewBatch().Delete("", "r", entity.AnyETag),
		"empty keys replace":  offline.NewBatch().UpdateAny(p("", ""), entity.Replace),
	} {
		if err := b.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestBatchETagRules: a Batch's writes follow Table's ETag rules, and a
// Batch runs only on the table that made it; all before any request, so
// each refusal matches ErrInvalid besides ErrNoETag.
func TestBatchETagRules(t *testing.T) {
	ctx := context.Background()
	offline := offlinePeople(t, "nowhere")
	noETag := &Person{Dept: "a", ID: "1", Name: "n"}
	withETag := &Person{Dept: "a", ID: "2", Name: "n", ETag: `W/"datetime'2024-05-01T10%3A00%3A00Z'"`}
	for name, c := range map[string]struct {
		b     *entity.Batch
		index int
	}{
		"Update without ETag":       {offline.NewBatch().Update(withETag, entity.Merge).Update(noETag, entity.Replace), 1},
		"DeleteEntity without ETag": {offline.NewBatch().DeleteEntity(noETag), 0},
		"Delete with empty ETag":    {offline.NewBatch().Insert(noETag).Delete("a", "2", ""), 1},
	} {
		_, err := offline.Submit(ctx, c.b)
		var be *entity.BatchError
		if !errors.Is(err, entity.ErrNoETag) || !errors.Is(err, entity.ErrInvalid) || !errors.As(err, &be) || be.Index != c.index {
			t.Errorf("%s: got %v, want ErrNoETag (and ErrInvalid) at operation %d", name, err, c.index)
		}
		if single := offline.Update(ctx, noETag, entity.Merge); !errors.Is(single, entity.ErrNoETag) || !errors.Is(single, entity.ErrInvalid) {
			t.Errorf("%s: the single-entity Update says %v", name, single)
		}
	}
	// The unconditional forms need no ETag: they pass Validate.
	if err := offline.NewBatch().UpdateAny(noETag, entity.Merge).Upsert(p2(noETag), entity.Replace).Delete("a", "3", entity.AnyETag).Validate(); err != nil {
		t.Errorf("unconditional operations: %v", err)
	}
	if err := offline.NewBatch().Update(noETag, entity.UpdateMode(9)).Validate(); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("bad mode: %v", err)
	}
	// A Batch not made by a Table, or made by another table, is refused.
	if _, err := offline.Submit(ctx, (&entity.Batch{}).Insert(noETag)); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("zero Batch: %v", err)
	}
	other := offlinePeople(t, "elsewhere")
	if _, err := offline.Submit(ctx, other.NewBatch().Insert(noETag)); !errors.Is(err, entity.ErrInvalid) || !strings.Contains(err.Error(), "elsewhere") {
		t.Errorf("another table's Batch: %v", err)
	}
}

// p2 is another entity of p's partition.
func p2(p *Person) *Person { return &Person{Dept: p.Dept, ID: p.ID + "-2", Name: p.Name} }

func TestBatchAllKindsAndETags(t *testing.T) {
	ctx := context.Background()
	people := newPeople(t)
	existing := []*Person{{Dept: "d", ID: "merge", Name: "m", Age: 1}, {Dept: "d", ID: "replace", Name: "r", Age: 2}, {Dept: "d", ID: "delete", Name: "x"}, {Dept: "d", ID: "upsert-merge", Name: "um", Age: 4}}
	for _, p := range existing {
		if err := people.Insert(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	ins := &Person{Dept: "d", ID: "insert", Name: "i"}
	mer := &Person{Dept: "d", ID: "merge", ETag: existing[0].ETag, Age: 10}
	rep := &Person{Dept: "d", ID: "replace", Name: "R"} // no ETag: UpdateAny, If-Match *
	del := existing[2]
	um := &entity.DynamicEntity{PartitionKey: "d", RowKey: "upsert-merge", Properties: map[string]any{"Age": int32(40)}}
	ur := &Person{Dept: "d", ID: "upsert-replace", Name: "ur"}
	b := people.NewBatch().Insert(ins).Update(mer, entity.Merge).UpdateAny(rep, entity.Replace).DeleteEntity(del).Upsert(um, entity.Merge).Upsert(ur, entity.Replace)
	etags, err := people.Submit(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(etags) != 6 || etags[3] != "" {
		t.Fatalf("etags: %q", etags)
	}
	for i, e := range []string{ins.ETag, mer.ETag, rep.ETag, "", um.ETag, ur.ETag} {
		if e != etags[i] || (i != 3 && e == "") {
			t.Errorf("op %d: entity ETag %q, returned %q", i, e, etags[i])
		}
	}
	// The returned ETags are the entities' current ones: they guard the next write.
	got, err := people.Get(ctx, "d", "merge")
	if err != nil || got.ETag != mer.ETag || got.Name != "m" || got.Age != 10 {
		t.Fatalf("merge result %+v (%v), etag from batch %q", got, err, mer.ETag)
	}
	if got, _ := people.Get(ctx, "d", "replace"); got.Name != "R" || got.Age != 0 {
		t.Errorf("replace result %+v", got)
	}
	if _, err := people.Get(ctx, "d", "delete"); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("delete result: %v", err)
	}
	if got, _ := people.Get(ctx, "d", "upsert-merge"); got.Name != "um" || got.Age != 40 {
		t.Errorf("upsert-merge result %+v", got)
	}
	// Cosmos DB's ETags carry no time: there is no Timestamp to write back.
	if (mer.Timestamp.IsZero() || um.Timestamp.IsZero()) != env.Cosmos() {
		t.Errorf("timestamps written back: %v, %v", mer.Timestamp, um.Timestamp)
	}
}

// TestBatchFailureNamesTheOperation makes operation 57 of 100 fail and checks
// that the error names it and that nothing was written.
func TestBatchFailureNamesTheOperation(t *testing.T) {
	ctx := context.Background()
	people := newPeople(t)
	if err := people.Insert(ctx, &Person{Dept: "p", ID: keys.Pad(57, 3), Name: "already here"}); err != nil {
		t.Fatal(err)
	}
	b := people.NewBatch()
	for i := 0; i < 100; i++ {
		b.Insert(&Person{Dept: "p", ID: keys.Pad(int64(i), 3), Name: fmt.Sprint(i)})
	}
	_, err := people.Submit(ctx, b)
	var te *entity.TransactionError
	var re *azcore.ResponseError
	if !errors.As(err, &te) || te.Index != 57 || te.Kind != entity.OpInsert || te.Code != "EntityAlreadyExists" || !errors.Is(err, entity.ErrAlreadyExists) || !errors.As(err, &re) {
		t.Fatalf("got %#v", err)
	}
	if te.Message == "" {
		t.Error("no service message")
	}
	n := 0
	for _, err := range people.Query(ctx, entity.Query{Filter: filter.PK("p")}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d entities after a failed transaction, want the 1 that was there", n)
	}

	// An unconditional merge of a missing entity fails: it never inserts.
	_, err = people.Submit(ctx, people.NewBatch().Insert(&Person{Dept: "q", ID: "1"}).UpdateAny(&Person{Dept: "q", ID: "missing", Name: "m"}, entity.Merge))
	if !errors.As(err, &te) || te.Index != 1 || !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("merge of a missing entity: %v", err)
	}
	if _, err := people.Get(ctx, "q", "missing"); !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("the merge created the entity: %v", err)
	}

	// A stale ETag fails the whole transaction.
	cur, _ := people.Get(ctx, "p", keys.Pad(57, 3))
	stale := cur
	if err := people.UpdateAny(ctx, &Person{Dept: "p", ID: cur.ID, Name: "moved on"}, entity.Merge); err != nil {
		t.Fatal(err)
	}
	stale.Name = "stale"
	_, err = people.Submit(ctx, people.NewBatch().Insert(&Person{Dept: "p", ID: "new"}).Update(&stale, entity.Replace))
	if !errors.As(err, &te) || te.Index != 1 || !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Fatalf("stale etag: %v", err)
	}
	if _, err := people.Get(ctx, "p", "new"); !errors.Is(err, entity.ErrNotFound) {
		t.Fatal("a failed transaction wrote its insert")
	}
}
