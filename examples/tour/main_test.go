package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// TestTour runs every step against the test service and checks that each
// told the story it should: `make demo` stays true.
func TestTour(t *testing.T) {
	var out strings.Builder
	if err := runSteps(context.Background(), env, &out, steps()); err != nil {
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
		"Tour complete.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the tour does not say %q", want)
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}
}
