package indexentity_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// Employee is the guide's employee: department and id as keys.
type Employee struct {
	PartitionKey string // department
	RowKey       string // employee id
	ETag         string `table:",etag"`
	FirstName    string
	LastName     string
	City         string `table:",omitempty"`
}

// hot is the retry policy of tests whose writers all write one list.
var hot = entity.RetryPolicy{Attempts: 200, BaseDelay: 2 * time.Millisecond, MaxDelay: 50 * time.Millisecond}

func lastName(e *Employee) (string, bool) { return e.LastName, e.LastName != "" }
func city(e *Employee) (string, bool)     { return e.City, e.City != "" }

// findings runs a whole check and returns its findings.
func findings[T any](t testing.TB, s *indexentity.Set[T], opts indexentity.CheckOptions) []drift.Finding {
	t.Helper()
	return patterntest.Collect(t, s.Check(context.Background(), opts))
}

// noDrift fails the test when a whole check finds anything.
func noDrift[T any](t testing.TB, s *indexentity.Set[T]) {
	t.Helper()
	fs := findings(t, s, indexentity.CheckOptions{})
	for i, f := range fs {
		if i == 10 {
			t.Errorf("… %d findings in all", len(fs))
			break
		}
		t.Errorf("drift: %v", f)
	}
}

// lookup returns the RowKeys a lookup yields.
func lookup(t testing.TB, s *indexentity.Set[Employee], index, pk, value string) []string {
	t.Helper()
	var rks []string
	for e, err := range s.LookupAll(context.Background(), index, pk, value, indexentity.LookupOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		rks = append(rks, e.RowKey)
	}
	return rks
}

// expect returns, by value, the RowKeys of the employees of partition pk
// holding each value, as the table says.
func expect(t testing.TB, tbl *entity.Table[Employee], pk string, value func(*Employee) (string, bool)) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for e, err := range tbl.Query(context.Background(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.PartitionKey != pk {
			continue
		}
		if v, ok := value(&e); ok {
			out[v] = append(out[v], e.RowKey)
		}
	}
	for _, rks := range out {
		slices.Sort(rks)
	}
	return out
}
