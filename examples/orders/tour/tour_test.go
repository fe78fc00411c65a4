package tour_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/orders/tour"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestTourUnderLostReplies runs the order service's story with 10% of
// all replies lost (tables and queue: azcore resends requests the service
// executed) and 2% of requests failed before sending: the story's own
// checks hold — a duplicate order number refused, the archived order's
// entries gone, every audit entry once, Check without drift — and it
// tells the same story as without faults.
func TestTourUnderLostReplies(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	faulty := faults.New(faults.Config{LoseReply: 0.10, FailBefore: 0.02, Seed: 19})
	if err := tour.Tour(ctx, demo.New(env.Account(), env.ConnectionString).With(faulty), &out); err != nil {
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
}
