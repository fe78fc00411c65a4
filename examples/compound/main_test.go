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
	names := Names{Telemetry: env.TableName(t)}
	var out strings.Builder
	if err := run(t.Context(), env.Account(), names, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		`sensor-7 uploaded 12 readings and its device row in 1 storage transaction; the 09:50 temperature is RowKey "reading temp 2516877437999999999".`,
		"It uploaded the same buffer again: partition sensor-7 still holds 13 rows.",
		"Newest three temperatures: 09:50 21.25°C 09:40 21.00°C 09:30 20.75°C (1 storage transaction).",
		"Humidity at 09:20: 42% (1 point query).",
		"Temperatures from 09:40 back to 09:10: 09:40 09:30 09:20.",
		"An instant before year 1 is refused before any request: compound: ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}

	// The partition as stored: the device row last, after the readings
	// (humidity before temp), each metric newest first.
	raw, err := entity.NewTableFromService[entity.DynamicEntity](env.TableService, names.Telemetry)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for e, err := range raw.Query(t.Context(), entity.Query{Filter: filter.PK("sensor-7")}) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, e.RowKey)
	}
	if len(keys) != 13 || keys[0] != "device" || keys[1] != "reading humidity 2516877437999999999" || keys[12] != "reading temp 2516877467999999999" {
		t.Errorf("stored RowKeys %q", keys)
	}
}
