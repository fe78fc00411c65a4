package secondaryindex_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestModify runs the Modify suite of the pattern packages
// (patterntest.ModifySuite) on a Set of the guide's two SamePartition
// indexes: the record's email is the value its unique index derives
// from, its age what another writer changes.
func TestModify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	email := func(i int) string { return strings.ToLower(patterntest.ValueName(i)) + "@contoso.com" }
	patterntest.ModifySuite(t, patterntest.ModifyAdapter[Employee, *entity.Table[Employee]]{
		Env: env,
		Setup: func(t testing.TB) *entity.Table[Employee] {
			tbl := employees(t, env)
			if err := localSet(t, tbl).Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: email(0)}); err != nil {
				t.Fatal(err)
			}
			return tbl
		},
		Open: func(t testing.TB, e *integration.Env, tbl *entity.Table[Employee], r entity.RetryPolicy) patterntest.ModifyFunc[Employee] {
			s, err := secondaryindex.New(patterntest.View[Employee](t, e, tbl), secondaryindex.Config{PrimaryPrefix: "empid_", Retry: r},
				emailIndex(secondaryindex.SamePartition), nameIndex(secondaryindex.SamePartition))
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context, pk, rk string, change func(*Employee) error, opts entity.ModifyOptions) (Employee, error) {
				return s.Modify(ctx, pk, rk, change, opts)
			}
		},
		PK: "Sales", RK: empid(1),
		Bump:     func(e *Employee) { e.Age++ },
		Bumps:    func(before, after *Employee) int { return int(after.Age - before.Age) },
		SetValue: func(e *Employee, i int) { e.Email = email(i) },
		Value:    func(e *Employee) string { return e.Email },
		Name:     email,
		Stored: func(t testing.TB, tbl *entity.Table[Employee]) Employee {
			e, err := tbl.Get(context.Background(), "Sales", empid(1))
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		ETag: func(e *Employee) string { return e.ETag },
		IsModeError: func(err error, mode entity.UpdateMode) bool {
			var me *secondaryindex.ModeError
			return errors.As(err, &me) && me.Mode == mode
		},
		Derived: func(t testing.TB, tbl *entity.Table[Employee], value string) {
			t.Helper()
			want := []string{"Sales/email_" + value, "Sales/empid_000001", "Sales/name_Jones empid_000001"}
			if got := rowKeys(t, tbl, ""); !slices.Equal(got, want) {
				t.Errorf("stored %q, want %q", got, want)
			}
			if fs := findings(t, localSet(t, tbl), secondaryindex.CheckOptions{}); len(fs) != 0 {
				t.Errorf("drift: %v", fs)
			}
		},
	})
}
