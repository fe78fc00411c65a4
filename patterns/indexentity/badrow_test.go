package indexentity_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/indexentity"
)

// TestOneBadRow: among five Joneses one employee is given a FirstName
// that is not a string by a write around the Set, and the list loses
// another. The bad employee does not stop the others, in every
// placement: a lookup yields its error, naming it, and goes on with the
// rest; Check yields its error and goes on to report the missing member
// (and does not call the bad employee an orphan); Rebuild repairs the
// list, leaves the bad employee listed, returns its error with a
// complete Summary, and a second Rebuild repairs nothing. The list is
// read back with a raw client.
func TestOneBadRow(t *testing.T) {
	t.Parallel()
	for _, c := range driftCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, c)
			for _, rk := range []string{"000000", "000001", "000002", "000003", "000004"} {
				f.insert(t, Employee{PartitionKey: "Sales", RowKey: rk, LastName: "Jones"})
			}
			props := `{"PartitionKey":"Sales","RowKey":"000002","FirstName":7}`
			if _, err := env.TableService.NewClient(f.w.emps.Name()).UpdateEntity(ctx, []byte(props), nil); err != nil {
				t.Fatal(err)
			}
			f.setList(t, "Sales", "Jones", ptr("000000\n000001\n000002\n000003\n"))

			var got []string
			var bad error
			for e, err := range f.s.LookupAll(ctx, "lastname", "Sales", "Jones", indexentity.LookupOptions{}) {
				if err != nil {
					bad = err
					continue
				}
				got = append(got, e.RowKey)
			}
			var se *indexentity.StepError
			if !slices.Equal(got, []string{"000000", "000001", "000003"}) || !errors.As(bad, &se) || se.RowKey != "000002" || !errors.Is(bad, entity.ErrDecode) {
				t.Errorf("lookup past a bad employee: %v, %v", got, bad)
			}
			var rows int
			var fs []string
			for x, err := range f.s.Check(ctx, indexentity.CheckOptions{}) {
				if err != nil {
					if !errors.As(err, &se) || se.RowKey != "000002" {
						t.Fatalf("check: %v", err)
					}
					rows++
					continue
				}
				fs = append(fs, brief(x))
			}
			if rows != 1 || !slices.Equal(fs, []string{"missing Sales/000004"}) {
				t.Errorf("check: %d bad rows, findings %q", rows, fs)
			}
			for run, want := range []int{1, 0} {
				sum, err := f.s.Rebuild(ctx, indexentity.CheckOptions{})
				if !errors.As(err, &se) || se.RowKey != "000002" || sum.Next != "" || sum.Repaired != want || sum.Drift() != want {
					t.Errorf("rebuild %d: %+v, %v; want %d repaired and the bad row's error", run+1, sum, err, want)
				}
			}
			list, _ := f.rawList(t, "Sales", "Jones")
			if !strings.Contains(list, "000002\n") || !strings.Contains(list, "000004\n") {
				t.Errorf("the list after the rebuild: %q", list)
			}
		})
	}
}
