package tour_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/backup/tour"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func TestTour(t *testing.T) {
	var out strings.Builder
	if err := tour.Tour(context.Background(), demo.New(env.Account(), env.ConnectionString), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"Stored 3000 orders of 20 customers as Order.v1.",
		"   export:  3000 entities,",
		"Exported 3000 entities in two ranges read in parallel",
		"Restored 3000 entities into another table; its export is byte-identical: true.",
		"header PartitionKey,RowKey,Timestamp,Customer,Customer@type,EntityType,EntityType@type,Placed,Placed@type,Total,Total@type",
		"Migrated Order.v1 to Order.v2 in place: 3000 upgraded, 0 already current.",
		"Run again: 0 upgraded, 3000 already current.",
		`Order 000450 now reads First "Ann3", Last "O'Brien", Total 0.5.`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q\n%s", want, out.String())
		}
	}
}
