package main

import (
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestRun runs the program's story as main does, on the test account with
// a table of its own, and checks what it says and what it leaves.
func TestRun(t *testing.T) {
	names := Names{Attempts: env.TableName(t)}
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"Tail(5) took 1 storage transaction ($top=5), newest first:\n",
		"   09:11:20  web3  10.0.3.12  ok=true   RowKey 2516877461199999999_4294967295_web3\n",
		"   09:11:10  web2  10.0.2.12  ok=true   RowKey 2516877461299999999_4294967295_web2\n",
		"   09:11:00  web1  10.0.1.12  ok=true   RowKey 2516877461399999999_4294967295_web1\n",
		"   09:10:20  web3  10.0.3.11  ok=false  RowKey 2516877461799999999_4294967295_web3\n",
		"   09:10:10  web2  10.0.2.11  ok=false  RowKey 2516877461899999999_4294967295_web2\n",
		"Since 09:10: 6 attempts",
		"pages of [10 10 10 6]",
		"web1 resent the attempt from 10.0.2.11: the log now holds it 2 times.",
		"Trim(before 09:06) removed 18 attempts (2 transactions: table Batch=1, table Query=1); 19 left.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// What the table holds, read with a client of its own: the 19 newest
	// entries, the resend among them, all in alice's partition.
	raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, names.Attempts)
	if err != nil {
		t.Fatal(err)
	}
	n, resent := 0, 0
	for e, err := range raw.Query(t.Context(), entity.Query{Filter: filter.PK("alice")}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if e.Properties["IP"] == "10.0.2.11" {
			resent++
		}
	}
	if n != 19 || resent != 2 {
		t.Errorf("the table holds %d attempts, %d of 10.0.2.11; want 19 and 2", n, resent)
	}
}
