package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program's story as main does, on the test account with
// a table of its own, and checks what it says and what it leaves.
func TestRun(t *testing.T) {
	names := Names{Skills: env.TableName(t)}
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`1\. Insert: Jonathan Jones with 1000 ratings in 1 storage transaction: one entity group transaction of [5-9] rows\.`),
		regexp.MustCompile(`RowKey "000123 00"\s+6 properties`),
		regexp.MustCompile(`2\. Get: one range query, 1 storage transaction: Jonathan Jones, 1000 ratings, Go = 1;`),
		regexp.MustCompile(`3\. Modify: Go 1 → 5 in 2 storage transactions \(a read and a transaction\) that rewrote rows "000123 00", "000123 0\d"; the other [3-7] keep their ETags\.`),
		regexp.MustCompile(`4\. .* ErrPreconditionFailed = true; nothing changed\.`),
		regexp.MustCompile(`5\. Replace with the top 10 skills: 1 storage transaction, .* stored rows: "000123 00", "000123 01"\.`),
		regexp.MustCompile(`6\. Ann Lee, 600 ratings, leaves: Delete in 1 storage transaction; her rows left: 0\.`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("output lacks %s", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// The table: Jonathan's head and one row of the ten skills of step 5;
	// nothing of Ann's.
	raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, names.Skills)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for e, err := range raw.Query(t.Context(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, e.PartitionKey+"/"+e.RowKey)
		if e.RowKey == "000123 01" {
			for i, skill := range named { // step 5's ratings: 1 to 5, then again
				if n, _ := entity.Prop[int32](&e, skill); n != int32(i%5+1) {
					t.Errorf("row 01 holds %s = %d, want %d", skill, n, i%5+1)
				}
			}
		}
	}
	if strings.Join(keys, ",") != "Engineering/000123 00,Engineering/000123 01" {
		t.Errorf("stored rows %q", keys)
	}
}
