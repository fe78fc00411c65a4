package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/internal/demotest"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestTour runs the program as main does (demo.Run), on the test account
// named by its explicit connection string in TABLEKIT_CONNECTION_STRING, and
// checks that every step told the story it should: `make demo` stays true.
func TestTour(t *testing.T) {
	var out strings.Builder
	if err := demo.Run(context.Background(), demotest.Getenv(env), &out, tour); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		`"Salary@odata.type":"Edm.Double","Salary":50000.0`,
		`"RowKey":"000123","FirstName":"Lisa","LastName":"O'Brien"`,
		"hired 2012-03-04T17:00:00Z",
		"ErrPreconditionFailed = true",
		"salary is now 61000",
		"deleted=true, then deleted=false",
		"two RowKeys with or      partition scan",
		"LastName eq 'x'' or 1 eq 1 or ''x'",
		"2500 entities",
		"Limit 250 with pages of 100: 250 entities",
		"index 1 (insert), EntityAlreadyExists",
		"3000 of 3001 entities written",
		"stopping\n",
		`"empid 000123 2013" -> ["empid" "000123" "2013"]`,
		"no update lost",
		"*Department SALES",
		"Tail(5) took 1 storage transaction ($top=5)",
		"total 200: every increment counted once.",
		"gives the same five: true.",
		"Pending orders, table-wide: 10039 (contoso), 10041 (fabrikam).",
		"Tour complete.",
		"Using the account ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the tour does not say %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}
}
