package entity_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// kitTable is a typed table over a client built with entity.ClientOptions
// (and no retries: a test that expects an error must not wait for them).
func kitTable[T any](t *testing.T) *entity.Table[T] {
	t.Helper()
	tbl, err := entity.NewTable[T](env.TableWith(t, entity.ClientOptions(env.NoRetryClientOptions())))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// plainClient is a table client built without tablekit's policies, as an
// application might hand one to NewTable.
func plainClient(t *testing.T) *aztables.Client {
	t.Helper()
	svc, err := aztables.NewServiceClientFromConnectionString(env.ConnectionString, &aztables.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name := env.TableName(t)
	if _, err := svc.CreateTable(context.Background(), name, nil); err != nil {
		t.Fatal(err)
	}
	return svc.NewClient(name)
}

// awkwardKeys are keys the service allows that aztables' transactions
// cannot address: quotes, an empty key, characters that need escaping.
var awkwardKeys = []string{"Ü'p k", "", "a''b", "x+y&z=1;$@!*(),", "%27", "'"}

// TestTransactionsForEveryKey runs every kind of transaction operation on
// partitions and rows named by awkward keys: tablekit's own $batch escapes
// keys as the single-entity calls do.
func TestTransactionsForEveryKey(t *testing.T) {
	ctx := context.Background()
	people := kitTable[Person](t)
	for _, pk := range awkwardKeys {
		t.Run(fmt.Sprintf("pk=%q", pk), func(t *testing.T) {
			var ins []*Person
			b := people.NewBatch()
			for _, rk := range awkwardKeys {
				p := &Person{Dept: pk, ID: rk, Name: "v1", Age: 1}
				ins = append(ins, p)
				b.Insert(p)
			}
			etags, err := people.Submit(ctx, b)
			if err != nil {
				t.Fatalf("insert all: %v", err)
			}
			for i, p := range ins {
				if p.ETag == "" || p.ETag != etags[i] {
					t.Fatalf("op %d: ETag %q, returned %q", i, p.ETag, etags[i])
				}
			}
			// Merge (by ETag), replace (any version), delete, and both
			// upserts, each addressed by a URL holding the awkward keys.
			mer := &Person{Dept: pk, ID: awkwardKeys[0], ETag: ins[0].ETag, Age: 2}
			rep := &Person{Dept: pk, ID: awkwardKeys[1], Name: "replaced"}
			um := &Person{Dept: pk, ID: awkwardKeys[3], Age: 4}
			ur := &Person{Dept: pk, ID: awkwardKeys[4], Name: "upserted"}
			b = people.NewBatch().Update(mer, entity.Merge).UpdateAny(rep, entity.Replace).Delete(pk, awkwardKeys[2], ins[2].ETag).Upsert(um, entity.Merge).Upsert(ur, entity.Replace).DeleteEntity(ins[5])
			if _, err := people.Submit(ctx, b); err != nil {
				t.Fatalf("merge/replace/delete/upserts: %v", err)
			}
			want := map[string]Person{
				awkwardKeys[0]: {Name: "v1", Age: 2},
				awkwardKeys[1]: {Name: "replaced"},
				awkwardKeys[3]: {Name: "v1", Age: 4},
				awkwardKeys[4]: {Name: "upserted"},
			}
			got := map[string]Person{}
			for p, err := range people.Query(ctx, entity.Query{Filter: filter.PK(pk)}) {
				if err != nil {
					t.Fatal(err)
				}
				got[p.ID] = Person{Name: p.Name, Age: p.Age}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("stored %v\nwant   %v", got, want)
			}
			// A stale ETag in an awkward key still names its operation.
			_, err = people.Submit(ctx, people.NewBatch().Update(&Person{Dept: pk, ID: awkwardKeys[0], ETag: ins[0].ETag}, entity.Merge))
			var te *entity.TransactionError
			if !errors.As(err, &te) || te.Index != 0 || !errors.Is(err, entity.ErrPreconditionFailed) {
				t.Fatalf("stale ETag: %v", err)
			}
		})
	}
}

// TestBulkWriteEveryPartition is the reproduction of a default-mode
// BulkWrite that refused the partitions other SDKs write freely.
func TestBulkWriteEveryPartition(t *testing.T) {
	ctx := context.Background()
	people := kitTable[Person](t)
	var in []Person
	for _, pk := range awkwardKeys {
		for i := range 150 {
			in = append(in, Person{Dept: pk, ID: fmt.Sprintf("%s-%03d", pk, i), Name: "n"})
		}
	}
	for _, mode := range []entity.OpKind{0, entity.OpUpsertMerge, entity.OpInsert} {
		if mode == entity.OpInsert {
			for i := range in {
				in[i].ID += "-i"
			}
		}
		outcomes, err := people.BulkWrite(ctx, in, entity.BulkOptions{Mode: mode})
		if err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
		for i, o := range outcomes {
			if o.Err != nil || o.ETag == "" {
				t.Fatalf("mode %v: outcome %d: %+v", mode, i, o)
			}
		}
	}
	n := 0
	for _, err := range people.Query(ctx, entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2*len(in) {
		t.Fatalf("%d entities stored, want %d", n, 2*len(in))
	}
}

// TestTransactionsWithoutThePolicies: a client built without
// entity.ClientOptions goes through aztables' SubmitTransaction, which
// cannot address these keys: they are refused before sending, per
// operation, with a typed error.
func TestTransactionsWithoutThePolicies(t *testing.T) {
	ctx := context.Background()
	people, err := entity.NewTable[Person](plainClient(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*entity.Batch{
		"quote in merge key": people.NewBatch().UpdateAny(&Person{Dept: "a", ID: "O'Brien"}, entity.Merge),
		"empty pk delete":    people.NewBatch().Insert(&Person{Dept: "", ID: "x"}).Delete("", "r", entity.AnyETag),
	} {
		_, err := people.Submit(ctx, b)
		var be *entity.BatchError
		if !errors.Is(err, entity.ErrInvalid) || !errors.As(err, &be) {
			t.Errorf("%s: %v, want a BatchError", name, err)
		}
	}
	if _, err := people.Get(ctx, "", "x"); !errors.Is(err, entity.ErrNotFound) {
		t.Fatalf("a refused transaction wrote: %v", err)
	}
	// BulkWrite's upserts: a quote in a key goes out as a single-entity
	// upsert (aztables escapes it there); an empty PartitionKey, which
	// nothing of aztables addresses, is refused with an error that says
	// what to do.
	in := []Person{{Dept: "p", ID: "O'Brien", Name: "q"}, {Dept: "", ID: "x"}, {Dept: "p", ID: "fine"}, {Dept: "Ü'p k", ID: "Ü'p k", Name: "u"}}
	outcomes, err := people.BulkWrite(ctx, in, entity.BulkOptions{Mode: entity.OpUpsertReplace})
	var be *entity.BulkError
	if !errors.As(err, &be) || be.Failed != 1 {
		t.Fatalf("got %v", err)
	}
	var ce *entity.ClientOptionsError
	if outcomes[0].Err != nil || outcomes[2].Err != nil || outcomes[3].Err != nil ||
		!errors.Is(outcomes[1].Err, entity.ErrNeedsClientOptions) || !errors.As(outcomes[1].Err, &ce) ||
		!strings.Contains(outcomes[1].Err.Error(), "entity.ClientOptions") {
		t.Fatalf("outcomes: %+v", outcomes)
	}
	for _, i := range []int{0, 3} {
		got, err := people.Get(ctx, in[i].Dept, in[i].ID)
		if err != nil || got.Name != in[i].Name || got.ETag != outcomes[i].ETag {
			t.Fatalf("%q/%q: stored %+v %v; outcome %+v", in[i].Dept, in[i].ID, got, err, outcomes[i])
		}
	}
	// The single-entity writes say the same, before any request.
	for name, err := range map[string]error{
		"Upsert": people.Upsert(ctx, &Person{Dept: "", ID: "y"}, entity.Replace),
		"Delete": people.Delete(ctx, "", "y", entity.AnyETag),
		"Modify": func() error {
			_, err := people.Modify(ctx, "", "y", func(*Person) error { return nil }, entity.ModifyOptions{})
			return err
		}(),
	} {
		if !errors.Is(err, entity.ErrNeedsClientOptions) || !strings.Contains(err.Error(), "entity.ClientOptions") {
			t.Errorf("%s with an empty PartitionKey on a plain client: %v", name, err)
		}
	}
	// Inserts can carry both.
	if _, err := people.BulkWrite(ctx, []Person{{Dept: "p", ID: "O'Neil"}, {Dept: "", ID: "x"}}, entity.BulkOptions{Mode: entity.OpInsert}); err != nil {
		t.Fatalf("insert mode: %v", err)
	}
	// The table's name is known from such a client too (from its URL).
	if n := people.Name(); len(n) < len("tktest") || n[:len("tktest")] != "tktest" {
		t.Fatalf("Name() = %q", people.Name())
	}
}
