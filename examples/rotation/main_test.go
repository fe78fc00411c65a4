package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program's story as main does, on the test account with
// tables of its own, and checks what it says and what it leaves.
func TestRun(t *testing.T) {
	names := Names{Catalog: env.TableName(t), Rotation: "logins" + env.QueueName(t)[len("tk"):][:10]}
	t.Cleanup(func() { dropTables(t, names.Rotation) })
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Wrote 600 attempts of 4 users over 3 days`),
		regexp.MustCompile(`   2031-07-29  table ` + names.Rotation + `20310729[a-z0-9]{8}\n   2031-07-30  table ` + names.Rotation + `20310730[a-z0-9]{8}\n   2031-07-31  table ` + names.Rotation + `20310731[a-z0-9]{8}\n   2031-08-01  table ` + names.Rotation + `20310801[a-z0-9]{8}\n`),
		// 20:00 to 02:00 across midnight: ann's attempts, from two tables.
		regexp.MustCompile(`merged in order:\n   Jul 30 20:00 ok\n   Jul 30 20:25 ok\n   Jul 31 00:00 ok\n   Jul 31 00:25 ok\n   Jul 31 00:50 failed\n   Jul 31 01:15 ok\n   Jul 31 01:40 ok\nExpired`),
		regexp.MustCompile(`Expired 2031-07-29: 200 attempts gone with table ` + names.Rotation + `20310729[a-z0-9]{8}, in 4 storage transactions \(1 table deletion, 3 for the catalog\)`),
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

	// What the account holds, listed with a client of its own: the tables
	// of the three days left (one ahead), 200 attempts in each of the two
	// written, none left of the expired day.
	held := map[string]int{} // attempts by the day in the table's name
	for _, name := range tables(t.Context(), t, names.Rotation) {
		day := strings.TrimPrefix(name, names.Rotation)[:8]
		raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, name)
		if err != nil {
			t.Fatal(err)
		}
		held[day] += 0
		for _, err := range raw.Query(t.Context(), entity.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			held[day]++
		}
	}
	if len(held) != 3 || held["20310730"] != 200 || held["20310731"] != 200 || held["20310801"] != 0 {
		t.Errorf("period tables hold %v, want 200 on Jul 30 and 31, none on Aug 1, no Jul 29", held)
	}
}

// tables lists the tables whose names start with prefix.
func tables(ctx context.Context, t *testing.T, prefix string) []string {
	t.Helper()
	var names []string
	for p := env.TableService.NewListTablesPager(nil); p.More(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range page.Tables {
			if strings.HasPrefix(*tb.Name, prefix) {
				names = append(names, *tb.Name)
			}
		}
	}
	return names
}

// dropTables deletes the tables whose names start with prefix.
func dropTables(t *testing.T, prefix string) {
	for _, name := range tables(context.Background(), t, prefix) {
		if _, err := env.TableService.DeleteTable(context.Background(), name, nil); err != nil {
			t.Error(err)
		}
	}
}
