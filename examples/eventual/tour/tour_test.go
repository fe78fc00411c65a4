package tour_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/eventual/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func TestTour(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	if err := tour.Tour(ctx, demo.New(env.Account(), env.ConnectionString), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := `== eventual: archive employees through a queue (design guide §6.3)
Current: 000123 Jones, 000124 Smith, 000125 Lee
Enqueued 3 ArchiveEmployee.v1 messages, one per employee.
Worker 1 archived 000123.
Worker 1 copied 000124 into Archive and crashed before deleting it from Current.
Mid-way, a reader sees Current: 000124 Smith, 000125 Lee
                    and Archive: 000123 Jones, 000124 Smith
Worker 2 starts; the message worker 1 was running reappears after 2s.
Worker 2 archived 000124 (delivery 2 of its message).
Worker 2 archived 000125 (delivery 1 of its message).
Converged. Current: (empty)
           Archive: 000123 Jones, 000124 Smith, 000125 Lee
Enqueued a NotifyPayroll.v1 message, a kind no worker handles yet.
It went to the poison queue (<queue>-poison) after delivery 1: unknown kind.
The poison queue holds the text as it was sent, byte for byte: true.
Deployed a handler for it; Replay moved 1 message back.
The new handler notified payroll of 000124.
Deleted the tables and queues.
`
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
	// The tour leaves no table behind.
	for p := env.TableService.NewListTablesPager(nil); p.More(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range page.Tables {
			if strings.HasPrefix(*tb.Name, "eventualtour") {
				t.Errorf("table %s left behind", *tb.Name)
			}
		}
	}
}
