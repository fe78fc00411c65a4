package secondaryindex_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// Money is stored flattened: Total_Cents, Total_Currency.
type Money struct {
	Cents    int64
	Currency string
}

// Order has a flattened field: its stored names are not its Go names.
type Order struct {
	PartitionKey string
	RowKey       string
	Customer     string
	Total        Money `table:",flatten"`
}

func byCustomer(o *Order) (string, bool) { return o.Customer, o.Customer != "" }

// TestPropertiesMustBeStored: Index.Properties naming the Go name of a
// flattened field ("Total") instead of what T stores ("Total_Cents") is
// refused by New with a *DeclarationError naming the field and the
// stored names, before any request; the stored name and the Go path of
// a field ("Total.Cents") are accepted, and the entry (read with a raw
// client) holds the copied property; a property bag accepts any name.
func TestPropertiesMustBeStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	orders := patterntest.Table[Order](t, env)
	for _, bad := range [][]string{{"Total"}, {"Customer", "Totl_Cents"}, {"total.cents"}} {
		_, err := secondaryindex.New(orders, secondaryindex.Config{PrimaryPrefix: "o_"},
			secondaryindex.Index[Order]{Name: "customer", Key: byCustomer, Properties: bad})
		var de *secondaryindex.DeclarationError
		if !errors.As(err, &de) || de.Field != "Properties" || de.Index != "customer" || !errors.Is(err, secondaryindex.ErrInvalidConfig) {
			t.Fatalf("Properties %q: %v, want a *DeclarationError for Properties", bad, err)
		}
		if bad[0] == "Total" && !strings.Contains(err.Error(), `"Total_Cents"`) {
			t.Errorf("the error does not name the stored properties: %v", err)
		}
	}
	for _, good := range [][]string{{"Total_Cents"}, {"Total.Cents"}} {
		s, err := secondaryindex.New(orders, secondaryindex.Config{PrimaryPrefix: "o_"},
			secondaryindex.Index[Order]{Name: "customer", Key: byCustomer, Properties: good})
		if err != nil {
			t.Fatalf("Properties %q: %v", good, err)
		}
		o := Order{PartitionKey: "p", RowKey: "o_" + good[0], Customer: "c" + good[0], Total: Money{Cents: 1250, Currency: "EUR"}}
		if err := s.Insert(ctx, &o); err != nil {
			t.Fatal(err)
		}
		e := rawGet(t, rawTable(t, orders.Name()), "p", "customer_"+keys.Compound(o.Customer, o.RowKey))
		if e == nil || e["Total_Cents"] != "1250" || e["Total_Currency"] != nil || e["Customer"] != nil {
			t.Errorf("Properties %q: the entry holds %v, want Total_Cents alone", good, e)
		}
	}
	bags := patterntest.View[entity.DynamicEntity](t, env, orders)
	if _, err := secondaryindex.New(bags, secondaryindex.Config{},
		secondaryindex.Index[entity.DynamicEntity]{Name: "any", Key: func(*entity.DynamicEntity) (string, bool) { return "", false }, Properties: []string{"Anything"}}); err != nil {
		t.Errorf("a property bag: %v", err)
	}
}
