package denormalize_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/denormalize"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestModifySuite runs the Modify suite of the pattern packages
// (patterntest.ModifySuite) on ModifySource of the guide's manager
// relation: the manager's phone is the value the department's copy
// derives from, the employee's Edits what another writer changes.
// TestModifyMode and TestModifyRetry cover ModifyTarget besides.
func TestModifySuite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	phone := func(i int) string { return "425-555-04" + string(rune('0'+i/10)) + string(rune('0'+i%10)) }
	patterntest.ModifySuite(t, patterntest.ModifyAdapter[Employee, guide]{
		Env: env,
		Setup: func(t testing.TB) guide {
			g := newGuide(t, env, denormalize.Config{})
			if err := g.copies.InsertSource(ctx, &Employee{PartitionKey: "Sales", RowKey: empID(1), Name: "Jones, Jeff", Phone: phone(0)}); err != nil {
				t.Fatal(err)
			}
			if err := g.copies.InsertTarget(ctx, &Department{PartitionKey: "Sales", RowKey: "dept Sales", ManagerID: empID(1)}); err != nil {
				t.Fatal(err)
			}
			return g
		},
		Open: func(t testing.TB, e *integration.Env, g guide, r entity.RetryPolicy) patterntest.ModifyFunc[Employee] {
			c := g.over(t, e, denormalize.Config{Retry: r}).copies
			return func(ctx context.Context, pk, rk string, change func(*Employee) error, opts entity.ModifyOptions) (Employee, error) {
				return c.ModifySource(ctx, pk, rk, change, opts)
			}
		},
		PK: "Sales", RK: empID(1),
		Bump:     func(e *Employee) { e.Edits++ },
		Bumps:    func(before, after *Employee) int { return int(after.Edits - before.Edits) },
		SetValue: func(e *Employee, i int) { e.Phone = phone(i) },
		Value:    func(e *Employee) string { return e.Phone },
		Name:     phone,
		Stored: func(t testing.TB, g guide) Employee {
			e, err := g.emps.Get(context.Background(), "Sales", empID(1))
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		ETag: func(e *Employee) string { return e.ETag },
		IsModeError: func(err error, mode entity.UpdateMode) bool {
			var me *denormalize.ModeError
			return errors.As(err, &me) && me.Op == "ModifySource" && me.Mode == mode
		},
		Derived: func(t testing.TB, g guide, value string) {
			t.Helper()
			d, err := g.depts.Get(context.Background(), "Sales", "dept Sales")
			if err != nil {
				t.Fatal(err)
			}
			if d.ManagerPhone != value {
				t.Errorf("the department's copy of the phone is %q, want %q", d.ManagerPhone, value)
			}
			g.check(t, "Sales")
		},
	})
}
