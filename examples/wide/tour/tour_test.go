package tour_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/wide/tour"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func TestTour(t *testing.T) {
	var out strings.Builder
	if err := tour.Tour(context.Background(), demo.New(env.Account(), env.ConnectionString), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`1\. Insert: Jonathan Jones with 1000 ratings in 1 storage transaction: one entity group transaction of [5-9] rows\.`),
		regexp.MustCompile(`RowKey "000123 00"\s+6 properties`),
		regexp.MustCompile(`2\. Get: one range query, 1 storage transaction: Jonathan Jones, 1000 ratings, Go = 1;`),
		regexp.MustCompile(`3\. Modify: Go 1 → 5 in 2 storage transactions \(a read and a transaction\) that rewrote rows "000123 00", "000123 0\d"; the other [3-7] keep their ETags\.`),
		regexp.MustCompile(`4\. .* ErrPreconditionFailed = true; nothing changed\.`),
		regexp.MustCompile(`5\. Replace with the top 10 skills: 1 storage transaction, .* stored rows: "000123 00", "000123 01"\.`),
		regexp.MustCompile(`6\. Delete: 1 storage transaction; rows left: 0\.`),
		regexp.MustCompile(`Deleted the table\.`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("output lacks %s", want)
		}
	}
	t.Log("\n" + out.String())
}
