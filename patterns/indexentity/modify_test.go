package indexentity_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestModify runs the Modify suite of the pattern packages
// (patterntest.ModifySuite) on a Set of a SamePartition lastname index:
// the record's last name is the value its list derives from, its first
// name what another writer changes (one "+" a change).
func TestModify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := func(t testing.TB, e *integration.Env, emps *entity.Table[Employee], r entity.RetryPolicy) *indexentity.Set[Employee] {
		s, err := indexentity.New(patterntest.View[Employee](t, e, emps), indexentity.Config{Retry: r}, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	patterntest.ModifySuite(t, patterntest.ModifyAdapter[Employee, *entity.Table[Employee]]{
		Env: env,
		Setup: func(t testing.TB) *entity.Table[Employee] {
			emps := patterntest.Table[Employee](t, env)
			if err := set(t, env, emps, entity.RetryPolicy{}).Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000152", LastName: patterntest.ValueName(0)}); err != nil {
				t.Fatal(err)
			}
			return emps
		},
		Open: func(t testing.TB, e *integration.Env, emps *entity.Table[Employee], r entity.RetryPolicy) patterntest.ModifyFunc[Employee] {
			s := set(t, e, emps, r)
			return func(ctx context.Context, pk, rk string, change func(*Employee) error, opts entity.ModifyOptions) (Employee, error) {
				return s.Modify(ctx, pk, rk, change, opts)
			}
		},
		PK: "Sales", RK: "000152",
		Bump: func(e *Employee) { e.FirstName += "+" },
		Bumps: func(before, after *Employee) int {
			return strings.Count(after.FirstName, "+") - strings.Count(before.FirstName, "+")
		},
		SetValue: func(e *Employee, i int) { e.LastName = patterntest.ValueName(i) },
		Value:    func(e *Employee) string { return e.LastName },
		Name:     patterntest.ValueName,
		Stored: func(t testing.TB, emps *entity.Table[Employee]) Employee {
			e, err := emps.Get(context.Background(), "Sales", "000152")
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		ETag: func(e *Employee) string { return e.ETag },
		IsModeError: func(err error, mode entity.UpdateMode) bool {
			var me *indexentity.ModeError
			return errors.As(err, &me) && me.Mode == mode
		},
		Derived: func(t testing.TB, emps *entity.Table[Employee], value string) {
			t.Helper()
			s := set(t, env, emps, entity.RetryPolicy{})
			if rks := lookup(t, s, "lastname", "Sales", value); !slices.Equal(rks, []string{"000152"}) {
				t.Errorf("%s lists %v", value, rks)
			}
			noDrift(t, s)
		},
	})
}
