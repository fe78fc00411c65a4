package secondaryindex_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestErrorsNameStepAndKeys walks the errors a Set returns: each is one
// line that says "secondaryindex: " once, names the step it failed in
// (the operation, not a read that went well), quotes the keys where there
// are keys and leaves them out where there are none, and still matches
// entity's sentinels.
func TestErrorsNameStepAndKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	s, err := secondaryindex.New(tbl, secondaryindex.Config{PrimaryPrefix: "empid_"}, emailIndex(secondaryindex.SamePartition), nameIndex(secondaryindex.SamePartition))
	if err != nil {
		t.Fatal(err)
	}
	a := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "a@x.com"}
	if err := s.Insert(ctx, &a); err != nil {
		t.Fatal(err)
	}
	stale := a
	if _, err := s.Modify(ctx, "Sales", empid(1), func(e *Employee) error { e.Age++; return nil }, entity.ModifyOptions{}); err != nil {
		t.Fatal(err)
	}
	dup := Employee{PartitionKey: "Sales", RowKey: empid(2), Email: "a@x.com"}
	_, lookupErr := s.Lookup(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{})
	_, unknownErr := s.Lookup(ctx, "status", "Sales", "x", secondaryindex.LookupOptions{})
	_, missingErr := s.Lookup(ctx, "email", "Sales", "nobody@x.com", secondaryindex.LookupOptions{})
	for _, tc := range []struct {
		name string
		err  error
		want string
		is   error
	}{
		{"lookup of a non-unique index", lookupErr, `secondaryindex: lookup (index "name"): index is not unique`, secondaryindex.ErrNotUnique},
		{"lookup of an unknown index", unknownErr, `secondaryindex: lookup (index "status"): no such index`, secondaryindex.ErrUnknownIndex},
		{"lookup of a missing value", missingErr, `secondaryindex: lookup (index "email") of PartitionKey "Sales", RowKey "email_nobody@x.com": `, entity.ErrNotFound},
		{"update of a changed entity", s.Update(ctx, &stale), `secondaryindex: update of PartitionKey "Sales", RowKey "empid_000001": the stored version is `, entity.ErrPreconditionFailed},
		{"update without an ETag", s.Update(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1)}),
			`secondaryindex: update of PartitionKey "Sales", RowKey "empid_000001": entity: entity has no etag for a conditional write: read it first (Get or a lookup with Verify) or use Modify`, entity.ErrNoETag},
		{"update of a missing entity", s.Update(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(9), ETag: "W/x"}), `secondaryindex: update of PartitionKey "Sales", RowKey "empid_000009": `, entity.ErrNotFound},
		{"delete of a missing entity", s.Delete(ctx, "Sales", empid(9), ""), `secondaryindex: delete of PartitionKey "Sales", RowKey "empid_000009": `, entity.ErrNotFound},
		{"delete of a changed entity", s.Delete(ctx, "Sales", empid(1), stale.ETag), `secondaryindex: delete of PartitionKey "Sales", RowKey "empid_000001": the stored version is `, entity.ErrPreconditionFailed},
		{"unique value taken", s.Insert(ctx, &dup), `secondaryindex: index "email": value "a@x.com" is held by PartitionKey "Sales", RowKey "empid_000001"`, secondaryindex.ErrDuplicate},
		{"repair of a duplicate", s.Repair(ctx, drift.Finding{Kind: drift.Duplicate, Index: "email", Primary: drift.Key{PartitionKey: "Sales", RowKey: empid(2)}, Entry: drift.Key{PartitionKey: "Sales", RowKey: "email_a@x.com"}}),
			`secondaryindex: repair (index "email") of PartitionKey "Sales", RowKey "email_a@x.com": the value is held by PartitionKey "Sales", RowKey "empid_000002" and another primary`, secondaryindex.ErrDuplicate},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		msg := tc.err.Error()
		if !strings.HasPrefix(msg, tc.want) || strings.Count(msg, "secondaryindex:") != 1 || strings.Contains(msg, "\n") || !errors.Is(tc.err, tc.is) {
			t.Errorf("%s: %q (is %v: %t), want it to start %q, one prefix, one line", tc.name, msg, tc.is, errors.Is(tc.err, tc.is), tc.want)
		}
	}
}
