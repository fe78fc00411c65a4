package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

func main() {
	os.Exit(run(os.Stdin, os.Stdout, strictFromEnv(os.Getenv)))
}

// strictFromEnv reports whether a skipped test is a failure: in CI, or when
// asked with TABLEKIT_NO_SKIP.
func strictFromEnv(getenv func(string) string) bool {
	ci := strings.ToLower(getenv("CI"))
	noSkip := strings.ToLower(getenv("TABLEKIT_NO_SKIP"))
	return ci == "true" || ci == "1" || noSkip == "1" || noSkip == "true"
}

// event is one line of `go test -json` (see cmd/test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
	ImportPath  string
}

type testState struct {
	name    string
	result  string // "", "pass", "fail" or "skip"
	output  []string
	elapsed float64 // seconds, as go test reported at the test's end
}

type pkgState struct {
	name   string
	tests  map[string]*testState
	order  []*testState // in the order the tests started
	output []string     // output not attributed to a test
	done   bool
	failed int // tests that failed, as go test reported them
}

// summary is what a stream added up to.
type summary struct {
	passed, failed, skipped int
	failedPkgs              []string
	skips                   []string // "pkg.TestName: reason"
	ran                     bool     // at least one test event was seen
	timed                   []timedTest
}

// timedTest is a finished top-level test and how long it took.
type timedTest struct {
	name    string // "pkg.TestName"
	elapsed float64
}

// slowestShown is how many of the slowest tests report lists.
const slowestShown = 10

// runner accumulates the stream's state and prints as it goes.
type runner struct {
	w     io.Writer
	pkgs  map[string]*pkgState
	order []string
	build map[string][]string // build output by ImportPath
	sum   summary
}

// run reads the stream from r, prints to w and returns the exit status.
func run(r io.Reader, w io.Writer, strict bool) int {
	rn := &runner{w: w, pkgs: map[string]*pkgState{}, build: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			// Not an event: something the go command printed itself.
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		rn.handle(ev)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(w, "testrun: reading the test stream: %v\n", err)
		rn.sum.failed++
	}
	for _, name := range rn.order {
		if p := rn.pkgs[name]; !p.done {
			rn.finishPackage(p, "fail", 0, "", "(the stream ended before the package finished)")
		}
	}
	return rn.report(strict)
}

func (rn *runner) pkg(name string) *pkgState {
	p := rn.pkgs[name]
	if p == nil {
		p = &pkgState{name: name, tests: map[string]*testState{}}
		rn.pkgs[name] = p
		rn.order = append(rn.order, name)
	}
	return p
}

func (p *pkgState) test(name string) *testState {
	t := p.tests[name]
	if t == nil {
		t = &testState{name: name}
		p.tests[name] = t
		p.order = append(p.order, t)
	}
	return t
}

func (rn *runner) handle(ev event) {
	switch ev.Action {
	case "build-output":
		rn.build[ev.ImportPath] = append(rn.build[ev.ImportPath], ev.Output)
		return
	case "build-fail":
		return
	}
	if ev.Package == "" {
		return
	}
	p := rn.pkg(ev.Package)
	if ev.Test == "" {
		switch ev.Action {
		case "output":
			p.output = append(p.output, ev.Output)
		case "pass", "fail", "skip":
			rn.finishPackage(p, ev.Action, ev.Elapsed, ev.FailedBuild, "")
		}
		return
	}
	t := p.test(ev.Test)
	if (ev.Action == "pass" || ev.Action == "fail") && !strings.Contains(t.name, "/") {
		t.elapsed = ev.Elapsed
		rn.sum.timed = append(rn.sum.timed, timedTest{name: shortPkg(p.name) + "." + t.name, elapsed: ev.Elapsed})
	}
	switch ev.Action {
	case "output":
		t.output = append(t.output, ev.Output)
	case "pass":
		t.result = "pass"
		rn.sum.passed++
		rn.sum.ran = true
	case "skip":
		t.result = "skip"
		rn.sum.skipped++
		rn.sum.ran = true
		rn.sum.skips = append(rn.sum.skips, fmt.Sprintf("%s.%s%s", p.name, t.name, skipReason(t.output)))
	case "fail":
		t.result = "fail"
		p.failed++
		rn.sum.failed++
		rn.sum.ran = true
		if !strings.Contains(t.name, "/") {
			rn.printFailure(p, t)
		}
	}
}

// printFailure prints a failed top-level test's output with that of its
// subtests that did not pass, as go test does: each test's "--- FAIL" line,
// then what it logged, indented by its depth.
func (rn *runner) printFailure(p *pkgState, top *testState) {
	for _, t := range p.order {
		if t != top && !strings.HasPrefix(t.name, top.name+"/") {
			continue
		}
		if t != top && (t.result == "pass" || t.result == "skip") {
			continue
		}
		rn.printTest(t, "")
	}
}

// printTest prints a test's result line (or header, when it has none) and
// its output without the framing lines, indented four spaces per level of
// subtest.
func (rn *runner) printTest(t *testState, header string) {
	indent := strings.Repeat("    ", strings.Count(t.name, "/"))
	var result string
	var body []string
	for _, line := range t.output {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case strings.HasPrefix(trimmed, "=== "):
			// RUN, PAUSE, CONT and NAME framing
		case strings.HasPrefix(trimmed, "--- "):
			result = trimmed
		default:
			body = append(body, line)
		}
	}
	if header != "" {
		result = header + "\n"
	}
	if result == "" {
		result = "--- " + strings.ToUpper(t.result) + ": " + t.name + "\n"
	}
	io.WriteString(rn.w, indent+result)
	for _, line := range body {
		io.WriteString(rn.w, indent+line)
	}
}

// finishPackage ends a package: tests still running count as failed (a
// timeout or a crash), and a failure that no test explains shows the
// package's own output.
func (rn *runner) finishPackage(p *pkgState, action string, elapsed float64, failedBuild, note string) {
	p.done = true
	unfinished := 0
	for _, t := range p.order {
		if t.result == "" {
			unfinished++
		}
	}
	if unfinished > 0 {
		action = "fail"
		for _, t := range p.order {
			if t.result != "" {
				continue
			}
			t.result = "fail"
			rn.sum.failed++
			rn.sum.ran = true
			rn.printTest(t, "--- FAIL: "+t.name+" (did not finish)")
		}
	}
	switch action {
	case "pass":
		fmt.Fprintf(rn.w, "ok  \t%s\t%.3fs\n", p.name, elapsed)
	case "skip":
		fmt.Fprintf(rn.w, "?   \t%s\t[no test files]\n", p.name)
	case "fail":
		rn.sum.failedPkgs = append(rn.sum.failedPkgs, p.name)
		switch {
		case failedBuild != "":
			for _, line := range rn.build[failedBuild] {
				io.WriteString(rn.w, line)
			}
			fmt.Fprintf(rn.w, "FAIL\t%s [build failed]\n", p.name)
			rn.sum.failed++
		case p.failed == 0 && unfinished == 0:
			// The package failed with no failing test: TestMain, a panic or a
			// race report outside tests, a vet error. Its output says why.
			for _, line := range p.output {
				if !strings.HasPrefix(line, "FAIL\t"+p.name) {
					io.WriteString(rn.w, line)
				}
			}
			fmt.Fprintln(rn.w, strings.TrimSpace(fmt.Sprintf("FAIL\t%s\t%.3fs %s", p.name, elapsed, note)))
			rn.sum.failed++
		default:
			if unfinished > 0 {
				for _, line := range p.output {
					if !strings.HasPrefix(line, "FAIL\t"+p.name) {
						io.WriteString(rn.w, line)
					}
				}
			}
			fmt.Fprintln(rn.w, strings.TrimSpace(fmt.Sprintf("FAIL\t%s\t%.3fs %s", p.name, elapsed, note)))
		}
	}
}

// report prints the closing lines and returns the exit status.
func (rn *runner) report(strict bool) int {
	s := rn.sum
	status := 0
	if len(s.skips) > 0 {
		fmt.Fprintln(rn.w)
		fmt.Fprintf(rn.w, "Skipped (%d):\n", len(s.skips))
		for _, sk := range s.skips {
			fmt.Fprintf(rn.w, "\t%s\n", sk)
		}
		if strict {
			fmt.Fprintln(rn.w, "FAIL: tests were skipped, which CI (CI=true or TABLEKIT_NO_SKIP=1) does not allow")
			status = 1
		}
	}
	if len(s.failedPkgs) > 0 || s.failed > 0 {
		slices.Sort(s.failedPkgs)
		fmt.Fprintln(rn.w)
		fmt.Fprintf(rn.w, "FAIL: %d package(s) failed: %s\n", len(s.failedPkgs), strings.Join(s.failedPkgs, " "))
		status = 1
	}
	rn.printSlowest()
	if !s.ran {
		fmt.Fprintln(rn.w, "FAIL: the test stream holds no test at all")
		status = 1
	}
	fmt.Fprintf(rn.w, "%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	return status
}

// skipReason returns ": " and the message a skipped test logged, if any.
func skipReason(output []string) string {
	for _, line := range output {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		// "file_test.go:12: reason"
		if _, after, ok := strings.Cut(l, ": "); ok && strings.Contains(l[:len(l)-len(after)], ".go:") {
			l = after
		}
		return ": " + l
	}
	return ""
}

// printSlowest lists the slowest top-level tests, slowest first: where the
// suite's time goes, so that it stays short.
func (rn *runner) printSlowest() {
	timed := slices.Clone(rn.sum.timed)
	if len(timed) == 0 {
		return
	}
	slices.SortStableFunc(timed, func(a, b timedTest) int {
		switch {
		case a.elapsed > b.elapsed:
			return -1
		case a.elapsed < b.elapsed:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	timed = timed[:min(len(timed), slowestShown)]
	fmt.Fprintln(rn.w)
	fmt.Fprintf(rn.w, "Slowest %d tests:\n", len(timed))
	for _, t := range timed {
		fmt.Fprintf(rn.w, "\t%7.2fs  %s\n", t.elapsed, t.name)
	}
}

// shortPkg drops the module path from a package's import path.
func shortPkg(pkg string) string {
	const module = "github.com/tablekit/tablekit"
	if rest, ok := strings.CutPrefix(pkg, module+"/"); ok {
		return rest
	}
	if pkg == module {
		return "tablekit"
	}
	return pkg
}
