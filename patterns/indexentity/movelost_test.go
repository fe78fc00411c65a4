package indexentity_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestMoveLostDeleteBesideWriter: MoveTo's delete has its reply lost, and
// inside azcore's retry window another writer inserts the employee again
// (Theirs). The resend is refused, and the Set's delete cannot tell its
// outcome (entity.ErrOutcomeUnknown); MoveTo reads again, copies the
// version there and deletes it: the move ends done, the archive holds the
// latest version, read back with a raw client, and the lists no drift.
func TestMoveLostDeleteBesideWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other, emps := newLocal(t, indexentity.Config{})
	if err := other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000001", LastName: "Orig"}); err != nil {
		t.Fatal(err)
	}
	f := faults.New(faults.Config{})
	s, err := indexentity.New(patterntest.View[Employee](t, patterntest.Faulty(env, f), emps), indexentity.Config{},
		indexentity.Index[Employee]{Name: "lastname", Value: lastName})
	if err != nil {
		t.Fatal(err)
	}
	archive := patterntest.Table[Employee](t, env)
	var theirs error
	f.LoseNextThen(1, isBatch, func(*http.Request) {
		theirs = other.Insert(ctx, &Employee{PartitionKey: "Sales", RowKey: "000001", LastName: "Theirs"})
	})
	if err := s.MoveTo(ctx, "Sales", "000001", archive); err != nil {
		t.Fatalf("MoveTo whose delete's reply was lost: %v", err)
	}
	if theirs != nil {
		t.Fatalf("the other writer's insert: %v", theirs)
	}
	if f.Stats().LostReplies != 1 {
		t.Fatalf("faults %+v, want one lost reply", f.Stats())
	}
	if e := rawGet(t, emps.Name(), "Sales", "000001"); e != nil {
		t.Errorf("still in the primaries' table: %v", e)
	}
	if e := rawGet(t, archive.Name(), "Sales", "000001"); e == nil || e["LastName"] != "Theirs" {
		t.Errorf("archived %v, want the latest version (Theirs)", e)
	}
	noDrift(t, other)
}
