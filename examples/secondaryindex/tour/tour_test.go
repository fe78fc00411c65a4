package tour_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/secondaryindex/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func TestTour(t *testing.T) {
	var out strings.Builder
	if err := tour.Tour(context.Background(), demo.New(env.Account(), env.ConnectionString), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := `== secondaryindex: employees by email and by last name (design guide §6.1, §6.2)
§6.1: inserted 3 employees with their entries in 3 transactions; partition Sales holds:
  email_jonesj@contoso.com
  email_maryj@contoso.com
  email_toms@contoso.com
  empid_000123
  empid_000124
  empid_000125
  name_Jones empid_000123
  name_Jones empid_000124
  name_Smith empid_000125
Email jonesj@contoso.com (a point query): empid_000123 John Jones, age 34
Last names starting with Jo (a range query): John Jones, Mary Jones
John's new email: the old entry deleted, the new one inserted, with John, in 2 requests (a read, a transaction).
Mary asks for John's email: refused, it is held by empid_000123; nothing written.
Broke the index by hand: deleted Tom's email entry, added an entry for nobody.
  check: email orphan entry email_ghost@contoso.com (no primary holds this entry)
  check: email missing entry email_toms@contoso.com (no entry)
Rebuild scanned 9 entities and repaired 2; a second check finds 0.
§6.2: the same indexes in partitions email_Sales and name_Sales, kept by a queue's worker.
John's new email, before the worker ran: the old email still finds empid_000123; with Verify, not found: true.
After the worker ran, no drift; the old email's entry is gone: true.
Deleted the tables and queues.
`
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
}
