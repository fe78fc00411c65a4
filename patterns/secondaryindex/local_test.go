package secondaryindex_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestSamePartition walks the guide's §6.1 example: an employee stored
// with an email entry and a last-name entry in one transaction, found by
// both, changed (the old entries go, the new ones come), deleted.
func TestSamePartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	s := localSet(t, tbl)
	jones := Employee{PartitionKey: "Sales", RowKey: empid(123), FirstName: "John", LastName: "Jones", Email: "JonesJ@contoso.com", Age: 34}
	if err := s.Insert(ctx, &jones); err != nil {
		t.Fatal(err)
	}
	if jones.ETag == "" {
		t.Error("Insert wrote no ETag back")
	}
	smith := Employee{PartitionKey: "Sales", RowKey: empid(124), FirstName: "Jane", LastName: "Jones", Email: "smithj@contoso.com", Age: 41}
	if err := s.Insert(ctx, &smith); err != nil {
		t.Fatal(err)
	}
	want := []string{"Sales/email_jonesj@contoso.com", "Sales/email_smithj@contoso.com", "Sales/empid_000123", "Sales/empid_000124", "Sales/name_Jones empid_000123", "Sales/name_Jones empid_000124"}
	if got := rowKeys(t, tbl, ""); !slices.Equal(got, want) {
		t.Fatalf("stored %q, want %q", got, want)
	}

	got, err := s.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.RowKey != jones.RowKey || got.Age != 34 || got.ETag != "" {
		t.Errorf("lookup by email: %+v", got)
	}
	got, err = s.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{Verify: true})
	if err != nil || got.ETag != jones.ETag {
		t.Errorf("verified lookup: %+v, %v (want ETag %s)", got, err, jones.ETag)
	}
	var names []string
	for e, err := range s.LookupAll(ctx, "name", "Sales", "Jones", secondaryindex.LookupOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Age != 0 || e.Email != "" {
			t.Errorf("the name entry copies only the names: %+v", e)
		}
		names = append(names, e.RowKey+" "+e.FirstName)
	}
	if !inOrder(names, []string{"empid_000123 John", "empid_000124 Jane"}) {
		t.Errorf("LookupAll Jones: %q", names)
	}

	// A change of the email: the old entry goes, the new one comes, in
	// the primary's transaction.
	changed, err := s.Modify(ctx, "Sales", empid(123), func(e *Employee) error {
		e.Email = "john.jones@contoso.com"
		e.LastName = "Jonas"
		return nil
	}, entity.ModifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if changed.ETag == "" || changed.ETag == jones.ETag {
		t.Errorf("Modify returned ETag %q", changed.ETag)
	}
	want = []string{"Sales/email_john.jones@contoso.com", "Sales/email_smithj@contoso.com", "Sales/empid_000123", "Sales/empid_000124", "Sales/name_Jonas empid_000123", "Sales/name_Jones empid_000124"}
	if got := rowKeys(t, tbl, ""); !slices.Equal(got, want) {
		t.Fatalf("after Modify: %q, want %q", got, want)
	}
	if _, err := s.Lookup(ctx, "email", "Sales", "jonesj@contoso.com", secondaryindex.LookupOptions{}); !errors.Is(err, entity.ErrNotFound) {
		t.Errorf("the old email still finds: %v", err)
	}
	var prefixed []string
	for e, err := range s.LookupPrefix(ctx, "name", "Sales", "Jon", secondaryindex.LookupOptions{Verify: true}) {
		if err != nil {
			t.Fatal(err)
		}
		prefixed = append(prefixed, e.LastName+" "+e.Email)
	}
	if !inOrder(prefixed, []string{"Jonas john.jones@contoso.com", "Jones smithj@contoso.com"}) {
		t.Errorf("LookupPrefix Jon: %q", prefixed)
	}

	// Update with a stale ETag is refused and changes nothing.
	stale := jones
	stale.Age = 99
	if err := s.Update(ctx, &stale); !errors.Is(err, entity.ErrPreconditionFailed) {
		t.Errorf("Update with a stale ETag: %v", err)
	}
	if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
		t.Errorf("drift: %v", fs)
	}
	if err := s.Delete(ctx, "Sales", empid(123), changed.ETag); err != nil {
		t.Fatal(err)
	}
	want = []string{"Sales/email_smithj@contoso.com", "Sales/empid_000124", "Sales/name_Jones empid_000124"}
	if got := rowKeys(t, tbl, ""); !slices.Equal(got, want) {
		t.Fatalf("after Delete: %q, want %q", got, want)
	}
}

// TestUniqueSamePartition: a second employee with a taken email is
// refused with a *UniqueError and nothing of it is written.
func TestUniqueSamePartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl := employees(t, env)
	s := localSet(t, tbl)
	a := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "A", Email: "x@contoso.com"}
	if err := s.Insert(ctx, &a); err != nil {
		t.Fatal(err)
	}
	b := Employee{PartitionKey: "Sales", RowKey: empid(2), LastName: "B", Email: "X@contoso.com"}
	err := s.Insert(ctx, &b)
	var ue *secondaryindex.UniqueError
	if !errors.As(err, &ue) || !errors.Is(err, secondaryindex.ErrDuplicate) || ue.Holder.RowKey != empid(1) {
		t.Fatalf("Insert of a taken email: %v", err)
	}
	if got := rowKeys(t, tbl, ""); len(got) != 3 {
		t.Errorf("stored %q", got)
	}
}
