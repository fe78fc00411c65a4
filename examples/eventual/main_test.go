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
	names := Names{Current: env.TableName(t), Archive: env.TableName(t), Work: env.QueueName(t)}
	t.Cleanup(func() {
		_, _ = env.QueueService.DeleteQueue(context.Background(), names.Work, nil)
		_, _ = env.QueueService.DeleteQueue(context.Background(), names.Work+"-poison", nil)
	})
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := `== eventual: archive employees through a queue (design guide §6.3)
   Current: 000123 Jones, 000124 Smith, 000125 Lee
Enqueued 4 ArchiveEmployee.v1 messages, 000124's twice. Until a worker runs, a reader sees them all in Current.
The worker drained the queue: 4 messages done; Move ran for 000124 2 times, the second finding the work done.
   Current: (empty)
   Archive: 000123 Jones, 000124 Smith, 000125 Lee
Enqueued a NotifyPayroll.v1 message, a kind no worker handles yet.
It went to the poison queue (` + names.Work + `-poison) after delivery 1: unknown kind.
Deployed a handler for it; Replay moved 1 message back.
The new handler notified payroll of 000124; 0 messages left in the poison queue.
`
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}

	// The tables and queues, read with clients of their own: everyone in
	// Archive, no one in Current, both queues empty.
	count := func(table string) int {
		raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, table)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, err := range raw.Query(t.Context(), entity.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	if c, a := count(names.Current), count(names.Archive); c != 0 || a != 3 {
		t.Errorf("Current holds %d, Archive %d; want 0 and 3", c, a)
	}
	for _, q := range []string{names.Work, names.Work + "-poison"} {
		props, err := env.QueueService.NewQueueClient(q).GetProperties(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := *props.ApproximateMessagesCount; n != 0 {
			t.Errorf("queue %s holds %d messages", q, n)
		}
	}
}
