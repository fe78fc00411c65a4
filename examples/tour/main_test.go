package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// vars is a getenv of fixed values.
func vars(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// testEnv names the test account as main reads it: by its connection
// string, or its URL for a live account reached with a credential.
func testEnv() func(string) string {
	if env.ConnectionString != "" {
		return vars(map[string]string{envConnectionString: env.ConnectionString})
	}
	return vars(map[string]string{envAccountURL: env.TableEndpoint})
}

// TestTour runs the tour's own steps and two example programs as main does,
// on the test account, and checks that every step told the story it
// should. Each example's own test checks the rest of its story; `make demo`
// runs them all.
func TestTour(t *testing.T) {
	var list []step
	for _, s := range steps() {
		if s.run != nil || s.program == "keys" || s.program == "compound" {
			list = append(list, s)
		}
	}
	var out strings.Builder
	if err := tour(t.Context(), testEnv(), &out, list); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"Using the account ",
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
		"$ go run ./examples/keys\n",
		`* "empid 000123 2013"`,
		"$ go run ./examples/compound\n",
		"It uploaded the same buffer again: partition sensor-7 still holds 13 rows.",
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

// TestStepsRunEveryExample: every example program under examples/ is a
// step of the tour, and every program step names one.
func TestStepsRunEveryExample(t *testing.T) {
	dirs, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "tour" || d.Name() == "observability" { // observability: a module of its own
			continue
		}
		src, err := os.ReadFile(filepath.Join("..", d.Name(), "main.go"))
		if err == nil && strings.Contains(string(src), "\npackage main\n") {
			want = append(want, d.Name())
		}
	}
	var got []string
	for _, s := range steps() {
		if s.program != "" {
			got = append(got, s.program)
		}
		if (s.program == "") == (s.run == nil) {
			t.Errorf("step %q is neither a program nor a function of the tour", s.title)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) || len(want) < 15 {
		t.Errorf("the tour runs %q, the example programs are %q", got, want)
	}
}

// TestConnectUseDevelopmentStorage: the shorthand for an Azurite on its
// default ports, which the SDKs refuse, gives an account on those ports,
// and the programs get it as it was given (no request is made: the test's
// Azurite is on other ports).
func TestConnectUseDevelopmentStorage(t *testing.T) {
	e, where, stop, err := connect(t.Context(), vars(map[string]string{envConnectionString: "UseDevelopmentStorage=true"}))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if got := e.acct.Endpoints(); got.Table != "http://127.0.0.1:10002/devstoreaccount1/" || got.Queue != "http://127.0.0.1:10001/devstoreaccount1/" {
		t.Errorf("endpoints %+v", got)
	}
	if !slices.Equal(e.vars, []string{"TABLEKIT_CONNECTION_STRING=UseDevelopmentStorage=true"}) || !strings.Contains(where, envConnectionString) {
		t.Errorf("vars %q, where %q", e.vars, where)
	}
}

// TestConnectBadConnectionString: a malformed string is named with the
// variable it came from, before anything starts.
func TestConnectBadConnectionString(t *testing.T) {
	_, _, _, err := connect(t.Context(), vars(map[string]string{envConnectionString: "AccountName=acct"}))
	if !errors.Is(err, account.ErrInvalid) || !strings.Contains(err.Error(), envConnectionString) || !strings.Contains(err.Error(), "AccountKey") {
		t.Errorf("connect: %v", err)
	}
}

// TestConnectStartsAzurite: with no account named, connect starts a private
// Azurite that serves tables, whose connection string the programs get,
// and stop stops it (what `make demo` does).
func TestConnectStartsAzurite(t *testing.T) {
	e, where, stop, err := connect(t.Context(), vars(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !strings.HasPrefix(where, "Started Azurite (pid ") || e.acct.Endpoints().Table == env.TableEndpoint ||
		len(e.vars) != 1 || !strings.HasPrefix(e.vars[0], envConnectionString+"=") {
		t.Errorf("where %q, endpoint %s, vars %q", where, e.acct.Endpoints().Table, e.vars)
	}
	_, drop, err := newTypedTable[struct{ PartitionKey, RowKey string }](t.Context(), e, "startsazurite")
	if err != nil {
		t.Fatal(err)
	}
	drop()
	if err := stop(); err != nil {
		t.Error(err)
	}
}

// TestProgramFailure: a program that fails makes the tour fail, naming it,
// its exit status and what it wrote to standard error.
func TestProgramFailure(t *testing.T) {
	var out strings.Builder
	err := runProgram(t.Context(), t.TempDir(), "nosuchprogram", nil, &out)
	if err == nil || !strings.Contains(err.Error(), "examples/nosuchprogram") {
		t.Errorf("runProgram: %v", err)
	}
}
