package resolver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/resolver"
)

// notRegistered is a type no schema of these tests knows.
type notRegistered struct {
	PartitionKey, RowKey string
	N                    int
}

// One bad entity among many in a Submit — of a type the schema does not
// know, or with a key the service refuses — refuses the whole transaction
// before any request with an *entity.BatchError naming its index; the
// table, read with a raw client, holds none of the others.
func TestSubmitOneBadEntityAmongMany(t *testing.T) {
	_, v2 := customerSchemas(t)
	bads := map[string]any{
		"unregistered type": &notRegistered{PartitionKey: "p", RowKey: "c02"},
		"bad key":           &Customer{PartitionKey: "p", RowKey: "c/02", First: "Bad"},
	}
	for name, bad := range bads {
		t.Run(name, func(t *testing.T) {
			name := env.TableName(t)
			if _, err := env.TableService.CreateTable(t.Context(), name, nil); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = env.TableService.DeleteTable(context.Background(), name, nil) })
			raw := env.TableService.NewClient(name)
			inj := faults.New(faults.Config{})
			tbl, err := resolver.NewTable(env.With(inj).TableService.NewClient(name), v2)
			if err != nil {
				t.Fatal(err)
			}
			b := tbl.NewBatch()
			for i, rk := range []string{"c00", "c01", "", "c03", "c04"} {
				if i == 2 {
					b.Insert(bad)
					continue
				}
				b.Insert(&Customer{PartitionKey: "p", RowKey: rk, First: "Good"})
			}
			_, err = tbl.Submit(t.Context(), b)
			var be *entity.BatchError
			if !errors.As(err, &be) || be.Index != 2 {
				t.Fatalf("Submit: %v, want an *entity.BatchError at index 2", err)
			}
			if n := inj.Stats().Requests; n != 0 {
				t.Errorf("Submit sent %d requests, want none", n)
			}
			pager := raw.NewListEntitiesPager(nil)
			for pager.More() {
				page, err := pager.NextPage(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Entities) > 0 {
					t.Errorf("the table holds %d entities, want none", len(page.Entities))
				}
			}
		})
	}
}
