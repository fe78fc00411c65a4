package indexentity_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestMoveToBesideAMoveOfANewerVersion: a MoveTo reads the employee,
// then — before its copy reaches the archive — another writer changes the
// employee and a second MoveTo archives that newer version and deletes
// it. The first MoveTo's copy must not overwrite the archived newer
// version with the one it read (its delete then finds nothing, which is a
// move done): the archive holds the change, the table nothing, Jones's
// list is empty and Check finds no drift.
func TestMoveToBesideAMoveOfANewerVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := indexentity.Config{Retry: hot}
	s, emps := newLocal(t, cfg)
	archive := patterntest.Table[Employee](t, env)
	if err := s.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000001", FirstName: "old", LastName: "Jones"}); err != nil {
		t.Fatal(err)
	}
	gate := &patterntest.Before{Match: func(r *http.Request) bool {
		// The first write to the archive: the copy.
		return r.Method != http.MethodGet && strings.Contains(r.URL.Path, archive.Name())
	}, Fn: func() {
		if _, err := s.Modify(ctx, "Sales", "000001", func(e *Employee) error { e.FirstName = "new"; return nil }, entity.ModifyOptions{}); err != nil {
			t.Error(err)
			return
		}
		if err := s.MoveTo(ctx, "Sales", "000001", archive); err != nil {
			t.Error(err)
		}
	}}
	e := env.With(gate)
	late, err := indexentity.New(patterntest.View[Employee](t, e, emps), cfg, indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	if err := late.MoveTo(ctx, "Sales", "000001", patterntest.View[Employee](t, e, archive)); err != nil {
		t.Fatal(err)
	}
	if !gate.Ran() {
		t.Fatal("the second writer never ran before the copy")
	}
	if got := rawGet(t, emps.Name(), "Sales", "000001"); got != nil {
		t.Errorf("the employee is still in the table: %v", got)
	}
	if got := rawGet(t, archive.Name(), "Sales", "000001"); got == nil || got["FirstName"] != "new" {
		t.Errorf("archived: %v, want the version the other writer changed (FirstName new)", got)
	}
	if got, err := s.Members(ctx, "lastname", "Sales", "Jones"); err != nil || len(got) != 0 {
		t.Errorf("Jones's list: %v, %v", got, err)
	}
	noDrift(t, s)
}
