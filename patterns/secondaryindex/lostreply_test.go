package secondaryindex_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// isTableWrite matches the transactions and the single-entity inserts
// (the reservations) of the table service.
func isTableWrite(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasPrefix(r.URL.String(), env.TableEndpoint)
}

// TestLostReplies loses the reply of each write's transaction (and, for
// indexes in another partition, of the reservation's insert): azcore
// resends it and the service refuses the resend at operation 0, for a
// change that was applied. Every call reports success, the change is
// applied once (Modify's increment counts once), and nothing drifts.
func TestLostReplies(t *testing.T) {
	t.Parallel()
	for _, placement := range []secondaryindex.Placement{secondaryindex.SamePartition, secondaryindex.OtherPartition} {
		t.Run(placement.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tbl := employees(t, env)
			f := faults.New(faults.Config{})
			faulty := env.With(f)
			qs := patterntest.Queues(t, env, 1)
			var s *secondaryindex.Set[Employee]
			settle := func() {}
			if placement == secondaryindex.SamePartition {
				s = localSet(t, patterntest.View[Employee](t, faulty, tbl))
			} else {
				s, _ = remoteSet(t, faulty, qs, tbl, nil, fast())
				settle = func() {
					if _, err := s.Relay(ctx); err != nil {
						t.Fatal(err)
					}
					if err := drainSet(ctx, t, env, qs, tbl); err != nil {
						t.Fatal(err)
					}
				}
			}
			e := Employee{PartitionKey: "Sales", RowKey: empid(1), LastName: "Jones", Email: "jones@contoso.com", Age: 30}
			// The reservation's insert (other partition) and the transaction.
			f.LoseNext(2, isTableWrite)
			if err := s.Insert(ctx, &e); err != nil {
				t.Fatalf("Insert: %v", err)
			}
			for range 3 {
				f.LoseNext(2, isTableWrite)
				got, err := s.Modify(ctx, "Sales", empid(1), func(e *Employee) error {
					e.Age++
					e.Email = "jones" + string(rune('a'+e.Age-30)) + "@contoso.com"
					return nil
				}, entity.ModifyOptions{})
				if err != nil {
					t.Fatalf("Modify: %v", err)
				}
				if got.Age > 33 {
					t.Fatalf("an increment applied twice: Age %d", got.Age)
				}
			}
			settle()
			stored, err := tbl.Get(ctx, "Sales", empid(1))
			if err != nil || stored.Age != 33 || stored.Email != "jonesd@contoso.com" {
				t.Fatalf("stored %+v, %v: want Age 33 and the last email", stored, err)
			}
			if fs := findings(t, s, secondaryindex.CheckOptions{}); len(fs) != 0 {
				t.Errorf("drift: %v", fs)
			}
			f.LoseNext(1, isTableWrite)
			if err := s.Delete(ctx, "Sales", empid(1), ""); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			settle()
			if left := rowKeys(t, tbl, ""); len(left) != 0 {
				t.Errorf("left after Delete: %q", left)
			}
			if st := f.Stats(); st.LostReplies < 5+4*int64(placement) {
				t.Errorf("only %d replies lost", st.LostReplies)
			}
		})
	}
}
