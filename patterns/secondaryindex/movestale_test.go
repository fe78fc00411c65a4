package secondaryindex_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// TestMoveToBesideAMoveOfANewerVersion: a MoveTo reads the employee,
// then — before its copy reaches the archive — another writer changes the
// employee and a second MoveTo archives that newer version and deletes
// it. The first MoveTo's copy must not overwrite the archived newer
// version with the one it read (its delete then finds nothing, which is a
// move done): the archive holds the change, the table nothing, and Check
// finds no drift.
func TestMoveToBesideAMoveOfANewerVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, archive := employees(t, env), employees(t, env)
	s := localSet(t, tbl)
	if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: empid(1), FirstName: "old", LastName: "Jones", Email: "j@x.com"}); err != nil {
		t.Fatal(err)
	}
	gate := &patterntest.Before{
		// The first write to the archive: the copy.
		Match: func(r *http.Request) bool {
			return r.Method != http.MethodGet && strings.Contains(r.URL.Path, archive.Name())
		},
		Fn: func() {
			if _, err := s.Modify(ctx, "Sales", empid(1), func(e *Employee) error { e.FirstName = "new"; return nil }, entity.ModifyOptions{}); err != nil {
				t.Error(err)
				return
			}
			if err := s.MoveTo(ctx, "Sales", empid(1), archive); err != nil {
				t.Error(err)
			}
		},
	}
	e := env.With(gate)
	late := localSet(t, patterntest.View[Employee](t, e, tbl))
	if err := late.MoveTo(ctx, "Sales", empid(1), patterntest.View[Employee](t, e, archive)); err != nil {
		t.Fatal(err)
	}
	if !gate.Ran() {
		t.Fatal("the second writer never ran before the copy")
	}
	if got := rawGet(t, rawTable(t, tbl.Name()), "Sales", empid(1)); got != nil {
		t.Errorf("the employee is still in the table: %v", got)
	}
	if got := rawGet(t, rawTable(t, archive.Name()), "Sales", empid(1)); got == nil || got["FirstName"] != "new" {
		t.Errorf("archived: %v, want the version the other writer changed (FirstName new)", got)
	}
	if left := indexRows(t, tbl.Name()); len(left) != 0 {
		t.Errorf("left after the move: %q", left)
	}
	if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
		t.Errorf("drift: %v", fs)
	}
}
