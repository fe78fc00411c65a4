package examples

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is tablekit's module path.
const module = "github.com/tablekit/tablekit"

// pkg is what go list says of one package.
type pkg struct {
	path, name    string
	imports, deps []string
}

// violations lists why packages could not be copied out of tablekit's
// tree into a service: an import of examples/demo, examples/internal,
// another example or any internal package of tablekit, and, for a
// program, package testing or tablekit's integration kits linked in. The
// tour, which starts a private Azurite for `make demo`, may link
// integration/azurite (which links no testing) and nothing else of them.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		for _, imp := range p.imports {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			switch {
			case rel == "internal" || strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/") || strings.HasSuffix(rel, "/internal"):
				out = append(out, p.path+" imports "+imp+", an internal package")
			case strings.HasPrefix(rel, "examples/"):
				out = append(out, p.path+" imports "+imp+": an example stands alone")
			}
		}
		if p.name != "main" {
			continue
		}
		tour := p.path == module+"/examples/tour"
		for _, d := range p.deps {
			switch {
			case d == "testing":
				out = append(out, p.path+" links package testing")
			case tour && d == module+"/integration/azurite":
			case d == module+"/integration" || strings.HasPrefix(d, module+"/integration/"):
				out = append(out, p.path+" links "+d+", a test kit")
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestExamplesStandAlone runs go list on every package under examples/ (and
// the observability module) and fails on every violation: a user copies an
// example program whole into a service, so it builds on tablekit's public
// API alone.
func TestExamplesStandAlone(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the examples' imports: %v", err)
	}
	var all []pkg
	for _, dir := range []string{".", "observability"} {
		cmd := exec.Command(goTool, "list", "-f", "{{.ImportPath}}|{{.Name}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", "./...")
		cmd.Dir = dir
		var stderr strings.Builder // "go: downloading …" lines, on a first run
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list in %s: %v\n%s%s", dir, err, out, stderr.String())
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			f := strings.Split(line, "|")
			if len(f) != 4 {
				t.Fatalf("go list line %q", line)
			}
			all = append(all, pkg{path: f[0], name: f[1], imports: strings.Fields(f[2]), deps: strings.Fields(f[3])})
		}
	}
	mains := 0
	for _, p := range all {
		if p.name == "main" {
			mains++
		}
	}
	if mains < 20 {
		t.Errorf("go list found %d example programs, want at least 20", mains)
	}
	for _, v := range violations(all) {
		t.Error(v)
	}
}

// TestViolations checks the check on planted packages.
func TestViolations(t *testing.T) {
	ex := module + "/examples/"
	got := violations([]pkg{
		{path: ex + "ok", name: "main", imports: []string{"fmt", module + "/entity"}, deps: []string{"fmt", module + "/entity", module + "/internal/batch"}},
		{path: ex + "a", name: "main", imports: []string{ex + "demo", module + "/internal/wtoken"}, deps: []string{"testing", module + "/integration/azurite"}},
		{path: ex + "b", name: "main", imports: []string{ex + "internal/demotest", module + "/patterns/internal/indexset"}, deps: []string{module + "/integration"}},
		{path: ex + "tour", name: "main", imports: []string{module + "/integration/azurite"}, deps: []string{module + "/integration/azurite", module + "/integration/faults"}},
		{path: ex + "lib", name: "lib", imports: []string{module + "/entity/internal/protect"}, deps: []string{"testing"}},
	})
	want := []string{
		ex + "a imports " + ex + "demo: an example stands alone",
		ex + "a imports " + module + "/internal/wtoken, an internal package",
		ex + "a links " + module + "/integration/azurite, a test kit",
		ex + "a links package testing",
		ex + "b imports " + ex + "internal/demotest, an internal package",
		ex + "b imports " + module + "/patterns/internal/indexset, an internal package",
		ex + "b links " + module + "/integration, a test kit",
		ex + "lib imports " + module + "/entity/internal/protect, an internal package",
		ex + "tour links " + module + "/integration/faults, a test kit",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
