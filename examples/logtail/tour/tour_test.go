package tour_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/logtail/tour"
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
	for _, want := range []string{
		`(DateTime.MaxValue.Ticks - t.Ticks).ToString("D19"): 2516877467999999999`,
		"Tail(5) took 1 storage transaction ($top=5), newest first:\n",
		"   09:11:20  web3  10.0.3.12  ok=true   RowKey 2516877461199999999_4294967295_web3\n",
		"   09:11:10  web2  10.0.2.12  ok=true   RowKey 2516877461299999999_4294967295_web2\n",
		"   09:11:00  web1  10.0.1.12  ok=true   RowKey 2516877461399999999_4294967295_web1\n",
		"   09:10:20  web3  10.0.3.11  ok=false  RowKey 2516877461799999999_4294967295_web3\n",
		"   09:10:10  web2  10.0.2.11  ok=false  RowKey 2516877461899999999_4294967295_web2\n",
		"Since 09:10: 6 attempts",
		"pages of [10 10 10 6]",
		"Trim(before 09:06) removed 18 attempts (2 transactions: table Batch=1, table Query=1); 18 left.",
		"Deleted the table.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}
}
