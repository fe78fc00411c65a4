package tour_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/rotation/tour"
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
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Wrote 600 attempts of 4 users over 3 days`),
		regexp.MustCompile(`   2031-07-29  table logins20310729[a-z0-9]{8}\n   2031-07-30  table logins20310730[a-z0-9]{8}\n   2031-07-31  table logins20310731[a-z0-9]{8}\n   2031-08-01  table logins20310801[a-z0-9]{8}\n`),
		// 20:00 to 02:00 across midnight: ann's attempts, from two tables.
		regexp.MustCompile(`merged in order:\n   Jul 30 20:00 ok\n   Jul 30 20:25 ok\n   Jul 31 00:00 ok\n   Jul 31 00:25 ok\n   Jul 31 00:50 failed\n   Jul 31 01:15 ok\n   Jul 31 01:40 ok\nExpired`),
		regexp.MustCompile(`Expired 2031-07-29: 200 attempts gone with table logins20310729[a-z0-9]{8}, in 4 storage transactions \(1 table deletion, 3 for the catalog\)`),
		regexp.MustCompile(`Deleting them entity by entity takes 200 transactions, in 100-entity batches at least 4`),
		regexp.MustCompile(`A late write to the expired day: rotation: .*period expired \(errors.Is ErrExpired: true\)`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("output lacks %s", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}
	// The tour leaves no table behind.
	for p := env.TableService.NewListTablesPager(nil); p.More(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range page.Tables {
			if strings.HasPrefix(*tb.Name, "logins") {
				t.Errorf("table %s left behind", *tb.Name)
			}
		}
	}
}
