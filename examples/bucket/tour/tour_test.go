package tour_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/bucket/tour"
	"github.com/tablekit/tablekit/examples/demo"
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
		`   spread: "2024-05-01 0"=48 "2024-05-01 1"=57 "2024-05-01 2"=47 "2024-05-01 3"=50 "2024-05-01 4"=43 "2024-05-01 5"=50 "2024-05-01 6"=55 "2024-05-01 7"=50` + "\n",
		`   one partition (the hot one): "2024-05-01"=400` + "\n",
		"Tail(5) across the buckets took 8 storage transactions (one $top=5 query per bucket):\n",
		"   09:06:39  /products/0  in \"2024-05-01 4\"\n",
		"   09:06:35  /products/3  in \"2024-05-01 7\"\n",
		"gives the same five: true.",
		`The view of 09:02:03 (/products/4) is in "2024-05-01 5": found with 1 point query.`,
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
