package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
)

// readme:begin
var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

func TestSomething(t *testing.T) {
	client := env.Table(t) // *aztables.Client on a fresh table, deleted at the end
	emps, err := entity.NewTable[Employee](client)
	if err != nil {
		t.Fatal(err)
	}
	e := &Employee{Department: "Sales", ID: "000123", Name: "Lisa", Hired: time.Now()}
	if err := emps.Insert(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	got, err := emps.Get(context.Background(), "Sales", "000123")
	if err != nil || got.Name != "Lisa" || got.ETag != e.ETag {
		t.Fatalf("Get = %+v, %v; want Lisa with ETag %s", got, err, e.ETag)
	}
}

// readme:end

// TestRun runs the quick start as `go run` would, on a table it has not
// seen, twice: the first run creates the table, the second finds it and
// the entity the first deleted gone, so the program works as written again.
func TestRun(t *testing.T) {
	if env.ConnectionString == "" {
		t.Skip("the quick start connects with a connection string; the account in the environment has none")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := env.TableName(t)
	want := `Lisa O'Brien of Sales earns 51000, lives in Redmond
update with a stale ETag refused: true
query: Sales 000123 Lisa O'Brien hired 2019-03-01
`
	for i := range 2 {
		var out strings.Builder
		if err := run(ctx, env.ConnectionString, name, &out); err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, out.String())
		}
		if out.String() != want {
			t.Errorf("run %d printed\n%s\nwant\n%s", i+1, out.String(), want)
		}
	}
	emps, err := entity.NewTableFromConnectionString[Employee](env.ConnectionString, name, env.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range emps.Query(ctx, entity.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 0 {
		t.Errorf("the quick start left %d entities in its table", n)
	}
}
