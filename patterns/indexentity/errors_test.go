package indexentity_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/indexentity"
)

// TestErrorsNameStepAndKeys walks the errors and findings a Set gives:
// each error is one line that says "indexentity: " once, names the step
// it failed in (the operation, not a read that went well) and quotes the
// keys, or the blob's name; a Stale finding, which concerns an index
// entity and no primary, prints no empty primary.
func TestErrorsNameStepAndKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []driftCase{driftCases[0], driftCases[3]} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, c)
			f.insert(t, Employee{PartitionKey: "Sales", RowKey: "000001", LastName: "Hall"})
			stale, err := f.w.emps.Get(ctx, "Sales", "000001")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.Modify(ctx, "Sales", "000001", func(e *Employee) error { e.FirstName = "H"; return nil }, entity.ModifyOptions{}); err != nil {
				t.Fatal(err)
			}
			f.settle(t)
			f.setList(t, "Sales", "Hall", ptr("garbage"))
			_, membersErr := f.s.Members(ctx, "lastname", "Sales", "Hall")
			_, unknownErr := f.s.Members(ctx, "status", "Sales", "x")
			corrupt := `indexentity: index "lastname": index entity PartitionKey "Sales", RowKey "lastname_Hall": `
			if c.placement == indexentity.Blob {
				corrupt = `indexentity: index "lastname": blob "lastname/Sales Hall.keys": `
			}
			for _, tc := range []struct {
				name string
				err  error
				want string
				is   error
			}{
				{"a damaged list", membersErr, corrupt, indexentity.ErrCorrupt},
				{"an unknown index", unknownErr, `indexentity: lookup (index "status"): no such index`, indexentity.ErrUnknownIndex},
				{"update of a changed entity", f.s.Update(ctx, &stale), `indexentity: update of PartitionKey "Sales", RowKey "000001": the stored version is `, entity.ErrPreconditionFailed},
				{"update of a missing entity", f.s.Update(ctx, &Employee{PartitionKey: "Sales", RowKey: "000009", ETag: "W/x"}), `indexentity: update of PartitionKey "Sales", RowKey "000009": `, entity.ErrNotFound},
				{"delete of a changed entity", f.s.Delete(ctx, "Sales", "000001", stale.ETag), `indexentity: delete of PartitionKey "Sales", RowKey "000001": the stored version is `, entity.ErrPreconditionFailed},
				{"delete of a missing entity", f.s.Delete(ctx, "Sales", "000009", ""), `indexentity: delete of PartitionKey "Sales", RowKey "000009": `, entity.ErrNotFound},
			} {
				if tc.err == nil {
					t.Errorf("%s: no error", tc.name)
					continue
				}
				msg := tc.err.Error()
				if !strings.HasPrefix(msg, tc.want) || strings.Count(msg, "indexentity:") != 1 || strings.Contains(msg, "\n") || !errors.Is(tc.err, tc.is) {
					t.Errorf("%s: %q, want it to start %q, one prefix, one line, matching %v", tc.name, msg, tc.want, tc.is)
				}
			}
			n := 0
			for _, x := range findings(t, f.s, indexentity.CheckOptions{}) {
				if x.Kind != drift.Stale {
					continue
				}
				n++
				if s := x.String(); strings.Contains(s, "for primary") || x.Primary != (drift.Key{}) {
					t.Errorf("a Stale finding names a primary: %s", s)
				}
			}
			if n != 1 {
				t.Errorf("%d Stale findings, want the damaged list", n)
			}
		})
	}
}
