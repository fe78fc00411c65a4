package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// names returns resource names of the test's own, deleted at its end.
func names(t *testing.T) Names {
	n := Names{Orders: env.TableName(t), Index: env.TableName(t), Archive: env.TableName(t), Audit: env.TableName(t), Work: env.QueueName(t)}
	t.Cleanup(func() {
		_, _ = env.QueueService.DeleteQueue(context.Background(), n.Work, nil)
		_, _ = env.QueueService.DeleteQueue(context.Background(), n.Work+"-poison", nil)
	})
	return n
}

// TestRun runs the program's story as main does, on the test account with
// tables and queues of its own, and checks what it says and what it
// leaves.
func TestRun(t *testing.T) {
	n := names(t)
	var out strings.Builder
	if err := run(t.Context(), env.Account(), n, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"== orders: an order service combining patterns",
		"contoso's orders, newest first: 10042 (May 1 11:00) 10040 (May 1 09:00) 10039 (Apr 29 09:00)\n",
		"Order 10042, found table-wide: customer contoso, May 1 11:00, 120.00, status pending.\n",
		"A second order 10042, for fabrikam, is refused: secondaryindex: ",
		"Pending orders, table-wide: 10042 (contoso), 10040 (contoso), 10039 (contoso), 10041 (fabrikam).\n",
		"Pending orders, table-wide: 10039 (contoso), 10041 (fabrikam).\n",
		"contoso's audit log, newest first: 10042 delivered, 10042 shipped, 10040 shipped, 10039 placed, 10042 placed, 10040 placed.\n",
		"Check read every order and every entry: no drift.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}
	checkStored(t, n)
}

// TestRunUnderLostReplies runs the same story with 10% of all replies lost
// (tables and queue: azcore resends requests the service executed) and 2%
// of requests failed before sending: the story's own checks hold — a
// duplicate order number refused, the archived order's entries gone, every
// audit entry once, Check without drift — it tells the same story as
// without faults, and leaves the same tables.
func TestRunUnderLostReplies(t *testing.T) {
	faulty := faults.New(faults.Config{LoseReply: 0.10, FailBefore: 0.02, Seed: 19})
	// With 12% of tries failing, the test account's 3 tries per request
	// would give up on about one request in 600, and the story makes
	// hundreds: the service's clients get 8 retries, as a program facing
	// a lossy network would set them.
	acct, err := env.Account().WithOptions(func(o *account.Options) {
		o.ClientOptions.PerRetryPolicies = append(o.ClientOptions.PerRetryPolicies, faulty)
		o.ClientOptions.Retry.MaxRetries = 8
		o.ClientOptions.Retry.RetryDelay = 20 * time.Millisecond
		o.ClientOptions.Retry.MaxRetryDelay = 200 * time.Millisecond
	})
	if err != nil {
		t.Fatal(err)
	}
	n := names(t)
	var out strings.Builder
	if err := run(t.Context(), acct, n, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"Pending orders, table-wide: 10042 (contoso), 10040 (contoso), 10039 (contoso), 10041 (fabrikam).\n",
		"Pending orders, table-wide: 10039 (contoso), 10041 (fabrikam).\n",
		"contoso's audit log, newest first: 10042 delivered, 10042 shipped, 10040 shipped, 10039 placed, 10042 placed, 10040 placed.\n",
		"Check read every order and every entry: no drift.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if s := faulty.Stats(); s.LostReplies == 0 {
		t.Errorf("no reply was lost: %+v", s)
	}
	checkStored(t, n)
}

// checkStored reads the tables with clients of their own: three orders
// left with their keys, 10042 in the archive, six audit entries.
func checkStored(t *testing.T, n Names) {
	t.Helper()
	rows := func(table string) []string {
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
		return keys
	}
	if got, want := strings.Join(rows(n.Orders), ","), "contoso/2516877467999999999 10040,contoso/2516879195999999999 10039,fabrikam/2516877431999999999 10041"; got != want {
		t.Errorf("orders\n%s\nwant\n%s", got, want)
	}
	if got, want := strings.Join(rows(n.Archive), ","), "contoso/2516877395999999999 10042"; got != want {
		t.Errorf("archive %s, want %s", got, want)
	}
	if got := len(rows(n.Audit)); got != 7 {
		t.Errorf("%d audit entries, want 7", got)
	}
}
