package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program's story as main does, on the test account with
// tables and queues of its own, and checks what it says and what it
// leaves.
func TestRun(t *testing.T) {
	names := Names{Staff: env.TableName(t), ByQueue: env.TableName(t), IndexQueue: env.QueueName(t), Inline: env.TableName(t)}
	t.Cleanup(func() {
		_, _ = env.QueueService.DeleteQueue(context.Background(), names.IndexQueue, nil)
		_, _ = env.QueueService.DeleteQueue(context.Background(), names.IndexQueue+"-poison", nil)
	})
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
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
After the worker ran, a check finds 0 findings; the old email's entry is gone: true.
Table-wide, without a worker: a unique email in partitions email_<bucket>, written by the writer itself.
Inserted 3 employees and their entries in 24 storage transactions, no queue.
John's new email finds empid_000123 as soon as Modify returns; the old one is gone: true; a check finds 0 findings.
`
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}

	// The tables as stored: the employees and exactly their entries.
	for table, want := range map[string]string{
		names.Staff: "Sales/email_john.jones@contoso.com Sales/email_maryj@contoso.com Sales/email_toms@contoso.com " +
			"Sales/empid_000123 Sales/empid_000124 Sales/empid_000125 " +
			"Sales/name_Jones empid_000123 Sales/name_Jones empid_000124 Sales/name_Smith empid_000125",
		names.ByQueue: "Sales/empid_000123 Sales/empid_000124 Sales/empid_000125 " +
			"email_Sales/email_john.jones@contoso.com email_Sales/email_maryj@contoso.com email_Sales/email_toms@contoso.com " +
			"name_Sales/name_Jones empid_000123 name_Sales/name_Jones empid_000124 name_Sales/name_Smith empid_000125",
		// No intent left, no entry of the old email: the writer wrote them all.
		names.Inline: "Sales/empid_000123 Sales/empid_000124 Sales/empid_000125 " +
			"email_00/email_maryj@contoso.com email_11/email_john.jones@contoso.com email_12/email_toms@contoso.com",
	} {
		raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, table)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for e, err := range raw.Query(t.Context(), entity.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, e.PartitionKey+"/"+e.RowKey)
		}
		if got := strings.Join(keys, " "); got != want {
			t.Errorf("table %s holds\n%s\nwant\n%s", table, got, want)
		}
	}
}
