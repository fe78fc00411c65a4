package main

import (
	"fmt"
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
	names := Names{Counts: env.TableName(t)}
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"8 servers added 200 messages at once",
		"read with one point query (1 storage transaction):\n",
		"   H08=20 H09=20 H10=20 H11=20 H12=20 H13=20 H14=20 H15=20 H16=20 H17=20\n",
		"   total 200: every increment counted once.\n",
		"spans 6 entities of 240 slots; the 4 that were written",
		"one range query (1 storage transaction): 00:00=1, 09:30=2, 17:59=3, 23:59=4.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// The day's entity as stored: ten counters of 20.
	raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, names.Counts)
	if err != nil {
		t.Fatal(err)
	}
	day, err := raw.Get(t.Context(), "emp000123", "2024-05-01")
	if err != nil {
		t.Fatal(err)
	}
	for h := 8; h <= 17; h++ {
		name := fmt.Sprintf("H%02d", h)
		if n, ok := entity.Prop[int64](&day, name); !ok || n != 20 {
			t.Errorf("%s = %v (present %v), want 20", name, n, ok)
		}
	}
}
