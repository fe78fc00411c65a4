package main

import (
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
	names := Names{Views: env.TableName(t)}
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		`   spread: "2024-05-01 0"=35 "2024-05-01 1"=44 "2024-05-01 2"=50 "2024-05-01 3"=51 "2024-05-01 4"=67 "2024-05-01 5"=45 "2024-05-01 6"=67 "2024-05-01 7"=41` + "\n",
		`   one partition (the hot one): "2024-05-01"=400` + "\n",
		"Tail(5) across the buckets took 8 storage transactions (one $top=5 query per bucket):\n",
		"   09:06:39  /products/0  in \"2024-05-01 4\"\n",
		"   09:06:35  /products/3  in \"2024-05-01 1\"\n",
		"gives the same five: true.",
		`The view of 09:02:03 (/products/4) is in "2024-05-01 3": found with 1 point query.`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// The table holds every view twice: once in its bucket, once in the
	// hot partition, and nothing else.
	raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, names.Views)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]int{}
	partitions := map[string]bool{}
	for e, err := range raw.Query(t.Context(), entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		byKey[e.RowKey]++
		partitions[e.PartitionKey] = true
	}
	if len(byKey) != 400 || len(partitions) != 9 {
		t.Errorf("%d distinct views in %d partitions, want 400 in 9", len(byKey), len(partitions))
	}
	for rk, n := range byKey {
		if n != 2 {
			t.Errorf("view %s is stored %d times, want 2", rk, n)
		}
	}
}
