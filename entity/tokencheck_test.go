package entity_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// TestTokensOfAnotherTableOrChanged: a page's continuation token resumes
// the same query on the same table, and nothing else: the same query on
// another table, and the token with any one of its characters changed,
// are refused with ErrInvalidToken before any request — they would have
// resumed somewhere else and returned the wrong rows.
func TestTokensOfAnotherTableOrChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	meter := cost.NewMeter()
	e := env.With(meter.Policy())
	one, err := entity.NewTable[Person](e.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	two, err := entity.NewTable[Person](e.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	var rows []Person
	for i := range 25 {
		rows = append(rows, Person{Dept: "Sales", ID: fmt.Sprintf("%03d", i), Name: "n"})
	}
	for _, tbl := range []*entity.Table[Person]{one, two} {
		if _, err := tbl.BulkWrite(ctx, rows, entity.BulkOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	q := entity.Query{Filter: filter.PK("Sales"), PageSize: 10}
	page, err := one.QueryPage(ctx, q, "")
	if err != nil || page.Next == "" {
		t.Fatalf("first page: %d rows, next %q, %v", len(page.Items), page.Next, err)
	}
	// The token resumes its own query: ten more rows, none of the first
	// page's (in key order on Azurite; Cosmos DB pages in no key order).
	rest, err := one.QueryPage(ctx, q, page.Next)
	seen := map[string]bool{}
	for _, p := range append(page.Items, rest.Items...) {
		seen[p.ID] = true
	}
	if err != nil || len(rest.Items) != 10 || len(seen) != 20 {
		t.Fatalf("the token on its own table: %d rows, %d distinct over both pages, %v", len(rest.Items), len(seen), err)
	}
	before := meter.Snapshot()
	if _, err := two.QueryPage(ctx, q, page.Next); !errors.Is(err, entity.ErrInvalidToken) {
		t.Errorf("the token on another table: %v, want ErrInvalidToken", err)
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range len(page.Next) {
		for _, c := range []byte{alphabet[(indexOf(alphabet, page.Next[i])+1)%64], alphabet[(indexOf(alphabet, page.Next[i])+32)%64]} {
			changed := page.Next[:i] + string(c) + page.Next[i+1:]
			if _, err := one.QueryPage(ctx, q, changed); !errors.Is(err, entity.ErrInvalidToken) {
				t.Errorf("the token with character %d changed to %q: %v, want ErrInvalidToken", i, c, err)
			}
		}
	}
	if n := meter.Snapshot().Sub(before).Total(); n != 0 {
		t.Errorf("refused tokens sent %d requests", n)
	}
}

func indexOf(s string, c byte) int {
	for i := range len(s) {
		if s[i] == c {
			return i
		}
	}
	return 0
}
