package tour_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/dataseries/tour"
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
		"8 servers added 200 messages at once",
		"read with one point query (1 storage transaction):\n",
		"   H08=20 H09=20 H10=20 H11=20 H12=20 H13=20 H14=20 H15=20 H16=20 H17=20\n",
		"   total 200: every increment counted once.\n",
		"spans 6 entities of 240 slots; the 4 that were written",
		"one range query (1 storage transaction): 00:00=1, 09:30=2, 17:59=3, 23:59=4.",
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
