package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// mixed.jsonl is a recorded `go test -json ./...` of a module with a package
// whose tests pass, fail, skip and fail in a subtest, a package that does
// not compile, a package whose TestMain exits 1, and one without tests.
// timeout.jsonl is a recorded run whose subtest hit -timeout.

func runFile(t *testing.T, file string, strict bool) (string, int) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	status := run(f, &out, strict)
	return out.String(), status
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestRecordedStream(t *testing.T) {
	out, status := runFile(t, "testdata/mixed.jsonl", false)
	t.Logf("output:\n%s", out)
	// Passed: TestPass, TestSub/ok. Failed: TestFail, TestSub/bad, TestSub,
	// the build failure and the failing TestMain. Skipped: TestSkip.
	if got, want := lastLine(out), "2 passed, 5 failed, 1 skipped"; got != want {
		t.Errorf("last line %q, want %q", got, want)
	}
	if status != 1 {
		t.Errorf("status %d, want 1", status)
	}
	for _, want := range []string{
		"mixed_test.go:9: want 2, got 3",   // a failure's output
		"--- FAIL: TestSub/bad",            // a failed subtest
		"mixed_test.go:16: sub failed",     // and its output
		"cannot use \"x\" (untyped string", // the build error
		"FAIL\texample.com/rec/broken [build failed]",
		"cannot start the test environment", // the TestMain failure
		"FAIL\texample.com/rec/mainfail",
		"?   \texample.com/rec/notests\t[no test files]",
		"example.com/rec/mixed.TestSkip: needs a live account",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, unwanted := range []string{
		"mixed_test.go:5: fine", // a passing test's log
		"=== RUN",
		"--- PASS",
	} {
		if strings.Contains(out, unwanted) {
			t.Errorf("output has %q", unwanted)
		}
	}
}

func TestTimeoutCountsUnfinishedTests(t *testing.T) {
	out, status := runFile(t, "testdata/timeout.jsonl", false)
	if got, want := lastLine(out), "1 passed, 2 failed, 0 skipped"; got != want {
		t.Errorf("last line %q, want %q\n%s", got, want, out)
	}
	if status != 1 {
		t.Errorf("status %d, want 1", status)
	}
	if !strings.Contains(out, "panic: test timed out after 1s") || !strings.Contains(out, "--- FAIL: TestSlow/sleeps (did not finish)") {
		t.Errorf("timeout not reported:\n%s", out)
	}
}

const passStream = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.01s\n"}
{"Action":"pass","Package":"p","Elapsed":0.01}
`

const skipStream = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0}
{"Action":"run","Package":"p","Test":"TestLive"}
{"Action":"output","Package":"p","Test":"TestLive","Output":"    live_test.go:7: no account\n"}
{"Action":"skip","Package":"p","Test":"TestLive","Elapsed":0}
{"Action":"pass","Package":"p","Elapsed":0.01}
`

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		strict       bool
		last         string
		status       int
	}{
		{"all pass", passStream, false, "1 passed, 0 failed, 0 skipped", 0},
		{"all pass in CI", passStream, true, "1 passed, 0 failed, 0 skipped", 0},
		{"skip allowed locally", skipStream, false, "1 passed, 0 failed, 1 skipped", 0},
		{"skip fails in CI", skipStream, true, "1 passed, 0 failed, 1 skipped", 1},
		{"empty stream", "", false, "0 passed, 0 failed, 0 skipped", 1},
		{"packages without tests", `{"Action":"start","Package":"p"}
{"Action":"output","Package":"p","Output":"?   \tp\t[no test files]\n"}
{"Action":"skip","Package":"p","Elapsed":0}
`, false, "0 passed, 0 failed, 0 skipped", 1},
		{"stream cut short", `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0}
`, false, "1 passed, 1 failed, 0 skipped", 1},
		{"race outside tests", `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0}
{"Action":"output","Package":"p","Output":"testing.go:1490: race detected outside of test execution\n"}
{"Action":"fail","Package":"p","Elapsed":0.1}
`, false, "1 passed, 1 failed, 0 skipped", 1},
		{"non-JSON lines pass through", "go: downloading example.com/x v1.0.0\n" + passStream, false, "1 passed, 0 failed, 0 skipped", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			status := run(strings.NewReader(tc.stream), &out, tc.strict)
			if got := lastLine(out.String()); got != tc.last {
				t.Errorf("last line %q, want %q\n%s", got, tc.last, out.String())
			}
			if status != tc.status {
				t.Errorf("status %d, want %d\n%s", status, tc.status, out.String())
			}
		})
	}
}

func TestSkipReported(t *testing.T) {
	var out strings.Builder
	run(strings.NewReader(skipStream), &out, true)
	for _, want := range []string{"p.TestLive: no account", "FAIL: tests were skipped"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestStrictFromEnv(t *testing.T) {
	for _, tc := range []struct {
		ci, noSkip string
		want       bool
	}{
		{"", "", false},
		{"true", "", true},
		{"false", "", false},
		{"", "1", true},
		{"false", "1", true},
	} {
		env := map[string]string{"CI": tc.ci, "TABLEKIT_NO_SKIP": tc.noSkip}
		if got := strictFromEnv(func(k string) string { return env[k] }); got != tc.want {
			t.Errorf("CI=%q TABLEKIT_NO_SKIP=%q: strict = %v, want %v", tc.ci, tc.noSkip, got, tc.want)
		}
	}
}

// TestSlowest checks that the report lists the slowest top-level tests,
// slowest first, before the closing line, and leaves subtests out.
func TestSlowest(t *testing.T) {
	var in strings.Builder
	for _, e := range []struct {
		test    string
		elapsed float64
	}{{"TestA", 0.5}, {"TestB", 3.25}, {"TestB/sub", 9}, {"TestC", 1.75}} {
		in.WriteString(`{"Action":"run","Package":"github.com/tablekit/tablekit/p","Test":"` + e.test + `"}` + "\n")
		in.WriteString(`{"Action":"pass","Package":"github.com/tablekit/tablekit/p","Test":"` + e.test + `","Elapsed":` + strconv.FormatFloat(e.elapsed, 'f', -1, 64) + "}\n")
	}
	in.WriteString(`{"Action":"pass","Package":"github.com/tablekit/tablekit/p","Elapsed":5}` + "\n")
	var out strings.Builder
	if status := run(strings.NewReader(in.String()), &out, false); status != 0 {
		t.Fatalf("status %d; output:\n%s", status, out.String())
	}
	s := out.String()
	i := strings.Index(s, "Slowest 3 tests:")
	if i < 0 {
		t.Fatalf("no slowest list in:\n%s", s)
	}
	list := s[i:]
	b, c, a := strings.Index(list, "3.25s  p.TestB\n"), strings.Index(list, "1.75s  p.TestC\n"), strings.Index(list, "0.50s  p.TestA\n")
	if b < 0 || c < 0 || a < 0 || !(b < c && c < a) {
		t.Errorf("slowest list not in order B, C, A:\n%s", list)
	}
	if strings.Contains(list, "TestB/sub") {
		t.Errorf("slowest list names a subtest:\n%s", list)
	}
	if got, want := lastLine(s), "4 passed, 0 failed, 0 skipped"; got != want { // subtests count too
		t.Errorf("last line %q, want %q", got, want)
	}
}
