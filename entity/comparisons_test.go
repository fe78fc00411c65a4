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

// TestQueryRefusesMoreComparisonsThanTheServiceTakes: a filter of 16
// discrete comparisons, which the service refuses (Azurite takes it), is
// refused before any request with a ValidationError matching ErrInvalid;
// one of 15 runs.
func TestQueryRefusesMoreComparisonsThanTheServiceTakes(t *testing.T) {
	t.Parallel()
	meter := cost.NewMeter()
	people, err := entity.NewTable[Person](env.With(meter.Policy()).Table(t))
	if err != nil {
		t.Fatal(err)
	}
	of := func(n int) filter.Expr {
		var ors []filter.Expr
		for i := range n - 1 {
			ors = append(ors, filter.RK(fmt.Sprint(i)))
		}
		return filter.And(filter.PK("Sales"), filter.Or(ors...))
	}
	before := meter.Snapshot()
	var ve *entity.ValidationError
	var refused error
	for _, err := range people.Query(context.Background(), entity.Query{Filter: of(16)}) {
		refused = err
		break
	}
	if !errors.As(refused, &ve) || !errors.Is(refused, entity.ErrInvalid) {
		t.Errorf("16 comparisons: %v, want a *ValidationError", refused)
	}
	if n := meter.Snapshot().Sub(before).Total(); n != 0 {
		t.Errorf("16 comparisons sent %d requests", n)
	}
	for _, err := range people.Query(context.Background(), entity.Query{Filter: of(15)}) {
		t.Errorf("15 comparisons on an empty table: %v", err)
	}
}
