package layers

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A rule says which tablekit packages the packages under one directory may
// import. Paths are relative to the module root. A package follows the
// rule of the longest under that holds it.
type rule struct {
	under string   // the importing packages: this directory and all below it
	may   []string // allowed imports: each of these and all below it
	// own also allows the importer's own tree one level below under: a
	// pattern its subpackages, an example its tour.
	own bool
	// tests also checks the package's own _test.go files (package x, not
	// x_test), which may import may and testMay.
	tests   bool
	testMay []string
	// mayNot are exceptions to may: below an allowed directory, not these.
	mayNot []string
}

// The layers, bottom up (see doc.go). lower is layers 1 to 4: what every
// layer above them may import.
var (
	lower = []string{"keys", "internal", "entity", "resolver", "backup", "cost", "throttle", "account"}
	// foundation are the patterns others build on: drift's findings and
	// eventual's queue-driven steps.
	foundation = []string{"patterns/drift", "patterns/eventual"}
	// kits are integration and its test kits: for tests only.
	kits = []string{"integration"}
	// testKits are the patterns' own test kit, which links testing.
	testKits = []string{"patterns/internal/patterntest"}
)

// rules are the layers. External test packages (package x_test) are
// outside the graph — nothing imports them — so a sweep of the public API
// from internal/ (apisweep, errtext) may import what it sweeps, and a
// package's external tests may use integration.
var rules = []rule{
	// 1. keys: a leaf.
	{under: "keys", tests: true},
	// 2. internal/: the floor.
	{under: "internal", may: []string{"internal", "keys"}, tests: true},
	// 3. entity and its packages; their own tests may use integration's
	// kits, which do not import them back (Go refuses a cycle).
	{under: "entity", may: []string{"entity", "internal", "keys"}, tests: true, testMay: kits},
	// 4. built on entity, or on internal/ alone.
	{under: "resolver", may: []string{"resolver", "entity", "internal", "keys"}, tests: true, testMay: kits},
	{under: "backup", may: []string{"backup", "entity", "internal", "keys"}, tests: true, testMay: kits},
	{under: "cost", may: []string{"cost", "internal", "keys"}, tests: true},
	{under: "throttle", may: []string{"throttle", "cost", "internal", "keys"}, tests: true},
	{under: "account", may: []string{"account", "cost", "throttle", "internal", "keys"}, tests: true},
	// 5. integration and its kits, on layers 1 to 4; azurite and faults
	// link no testing (a program may use them), so they import neither
	// integration nor entity's layer above what they need.
	{under: "integration", may: append([]string{"integration"}, lower...), tests: true},
	{under: "integration/azurite", may: []string{"integration/azurite", "account", "cost", "throttle", "internal", "keys"}, tests: true},
	{under: "integration/cosmos", may: []string{"integration/cosmos", "internal", "keys"}, tests: true},
	{under: "integration/faults", may: []string{"integration/faults"}, tests: true},
	// 6. patterns: the foundation patterns, then patterns/internal on
	// them, then every other pattern on both (its own tree, no other
	// pattern sideways).
	{under: "patterns", may: slices.Concat(lower, foundation, []string{"patterns/internal"}), own: true, mayNot: testKits, tests: true, testMay: append(testKits, kits...)},
	{under: "patterns/drift", may: []string{"patterns/drift", "entity", "internal", "keys"}, tests: true},
	{under: "patterns/eventual", may: append([]string{"patterns/eventual"}, lower...), tests: true},
	{under: "patterns/internal", may: slices.Concat(lower, foundation, []string{"patterns/internal"}), mayNot: testKits, tests: true, testMay: append(testKits, kits...)},
	{under: "patterns/internal/patterntest", may: slices.Concat(lower, foundation, []string{"patterns/internal"}, kits), tests: true},
	// 7. examples: programs on the public API (never internal/, never
	// integration, which links testing, never another example); their
	// tests also use integration and its kits. The tour, the runner of
	// `make demo`, also starts a private Azurite (integration/azurite,
	// which links no testing) and runs the examples as programs: it
	// imports none of them.
	{under: "examples", may: slices.Concat(lower[2:], []string{"keys", "patterns"}), tests: true, testMay: kits},
	{under: "examples/tour", may: slices.Concat(lower[2:], []string{"keys", "patterns", "integration/azurite"}), tests: true, testMay: kits},
}

// ruleFor returns the rule for the package in dir: the one with the
// longest under that holds it.
func ruleFor(dir string) (rule, bool) {
	var best rule
	found := false
	for _, r := range rules {
		if within(dir, r.under) && (!found || len(r.under) > len(best.under)) {
			best, found = r, true
		}
	}
	return best, found
}

// allowed reports whether the package in dir, under rule r, may import
// rel (relative to the module root); test says the importer is a _test.go
// file of the package itself.
func (r rule) allowed(dir, rel string, test bool) bool {
	in := func(list []string) bool {
		return slices.ContainsFunc(list, func(m string) bool { return within(rel, m) })
	}
	if test && in(r.testMay) {
		return true
	}
	if in(r.mayNot) {
		return false
	}
	if in(r.may) {
		return true
	}
	if r.own {
		rest, _ := strings.CutPrefix(dir, r.under+"/")
		if top, _, _ := strings.Cut(rest, "/"); rest != dir && top != "" && within(rel, r.under+"/"+top) {
			return true
		}
	}
	return false
}

// violation is one import that a rule forbids.
type violation struct {
	file, imp string
}

func (v violation) String() string { return v.file + " imports " + v.imp }

// check returns the imports in files (path relative to the module root ->
// source) that rules forbid, for module mod.
func check(mod string, files map[string]string) ([]violation, error) {
	var out []violation
	fset := token.NewFileSet()
	for path, src := range files {
		f, err := parser.ParseFile(fset, path, src, parser.ImportsOnly)
		if err != nil {
			return nil, err
		}
		test := strings.HasSuffix(path, "_test.go")
		if test && strings.HasSuffix(f.Name.Name, "_test") {
			continue
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		r, ok := ruleFor(dir)
		if !ok || (test && !r.tests) {
			continue
		}
		for _, is := range f.Imports {
			imp, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return nil, err
			}
			rel, ok := strings.CutPrefix(imp, mod+"/")
			if !ok {
				if imp == mod {
					out = append(out, violation{path, imp})
				}
				continue
			}
			if !r.allowed(dir, rel, test) {
				out = append(out, violation{path, imp})
			}
		}
	}
	slices.SortFunc(out, func(a, b violation) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// module returns the module root and path.
func module(t *testing.T) (root, mod string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "module "); ok {
			return root, strings.TrimSpace(m)
		}
	}
	t.Fatal("go.mod names no module")
	return "", ""
}

// TestLayers parses every .go file of the module and fails on an import
// that runs back up a layer.
func TestLayers(t *testing.T) {
	root, mod := module(t)
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if _, ok := ruleFor(filepath.ToSlash(filepath.Dir(rel))); !ok {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[rel] = string(src)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk must have seen each layer, or the check proves nothing.
	seen := slices.Collect(maps.Keys(files))
	for _, want := range []string{"keys", "internal/jsonscan", "entity/sas", "entity/internal/protect",
		"resolver", "backup", "cost", "throttle", "account",
		"integration/crashtest", "integration/azurite", "integration/faults", "integration/seamtest",
		"patterns/eventual/internal/queueproc", "patterns/internal/indexset", "patterns/internal/patterntest", "patterns/bucket",
		"examples/tour", "examples/bucket", "examples/orders"} {
		if !slices.ContainsFunc(seen, func(p string) bool { return within(p, want) }) {
			t.Errorf("the walk from %s found no %s", root, want)
		}
	}
	vs, err := check(mod, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("%s: runs back up a layer (see package internal's documentation)", v)
	}
}

// TestLayersFindsUpwardImports checks the checker on planted arrows.
func TestLayersFindsUpwardImports(t *testing.T) {
	const mod = "example.com/m"
	src := func(pkg string, imps ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "package %s\n\nimport (\n", pkg)
		for _, i := range imps {
			fmt.Fprintf(&b, "\t%q\n", i)
		}
		b.WriteString(")\n")
		return b.String()
	}
	files := map[string]string{
		"internal/a/a.go":         src("a", "strings", mod+"/internal/b", mod+"/keys"),
		"internal/a/up.go":        src("a", mod+"/entity"),
		"internal/a/in_test.go":   src("a", mod+"/integration"),
		"internal/a/ext_test.go":  src("a_test", mod+"/entity", mod+"/resolver"),
		"internal/internalx/x.go": src("internalx", mod+"/patterns/eventual"),
		"internal/b/b.go":         src("b", mod),
		"keys/keys.go":            src("keys", mod+"/internal/ident"),
		"entity/sas/open.go":      src("sas", mod+"/entity", mod+"/resolver"),
		"entity/sas/open_test.go": src("sas", mod+"/integration"),
		"entity/crypt/c.go":       src("crypt", mod+"/entity/internal/protect", mod+"/entity"),
		"entityx/e.go":            src("entityx", mod+"/patterns/wide"),
		// layer 4
		"resolver/r.go": src("resolver", mod+"/entity", mod+"/patterns/eventual"),
		"backup/b.go":   src("backup", mod+"/resolver"),
		"cost/c.go":     src("cost", mod+"/entity"),
		"account/a.go":  src("account", mod+"/cost", mod+"/throttle", mod+"/internal/connstr", mod+"/entity"),
		// layer 5
		"integration/env.go":         src("integration", mod+"/account", mod+"/integration/azurite", mod+"/entity"),
		"integration/up.go":          src("integration", mod+"/patterns/eventual"),
		"integration/faults/f.go":    src("faults", mod+"/entity"),
		"integration/azurite/a.go":   src("azurite", mod+"/account", mod+"/integration"),
		"integration/seamtest/s.go":  src("seamtest", mod+"/entity", mod+"/integration/faults", mod+"/patterns/bucket"),
		"integration/crashtest/c.go": src("crashtest", mod+"/integration"),
		"integration/cosmos/c.go":    src("cosmos", mod+"/internal/pipeline"),
		"integration/x/examples.go":  src("x", mod+"/examples/demo"),
		// layer 6
		"patterns/wide/wide.go":                src("wide", mod+"/integration", mod+"/entity", mod+"/patterns/eventual", mod+"/patterns/internal/indexset"),
		"patterns/wide/sub/s.go":               src("sub", mod+"/patterns/wide", mod+"/patterns/bucket"),
		"patterns/wide/w_test.go":              src("wide", mod+"/patterns/internal/patterntest", mod+"/integration/faults"),
		"patterns/wide/kit.go":                 src("wide", mod+"/patterns/internal/patterntest"),
		"patterns/eventual/e.go":               src("eventual", mod+"/patterns/eventual/internal/queueproc", mod+"/patterns/large"),
		"patterns/drift/d.go":                  src("drift", mod+"/patterns/eventual"),
		"patterns/internal/indexset/i.go":      src("indexset", mod+"/patterns/drift", mod+"/patterns/secondaryindex"),
		"patterns/internal/patterntest/p.go":   src("patterntest", mod+"/integration", mod+"/patterns/eventual"),
		"patterns/internal/indexset/i_test.go": src("indexset", mod+"/integration"),
		// layer 7
		"examples/wide/main.go":      src("main", mod+"/patterns/wide", mod+"/account", mod+"/integration/azurite", mod+"/examples/bucket"),
		"examples/wide/main_test.go": src("main", mod+"/integration", mod+"/integration/faults"),
		"examples/wide/helper.go":    src("main", mod+"/integration/crashtest", mod+"/internal/wtoken"),
		"examples/tour/main.go":      src("main", mod+"/integration/azurite", mod+"/entity", mod+"/examples/wide", mod+"/integration"),
		"examples/tour/main_test.go": src("main", mod+"/integration"),
	}
	vs, err := check(mod, files)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.String())
	}
	want := []string{
		"account/a.go imports " + mod + "/entity",
		"backup/b.go imports " + mod + "/resolver",
		"cost/c.go imports " + mod + "/entity",
		"entity/sas/open.go imports " + mod + "/resolver",
		"examples/tour/main.go imports " + mod + "/examples/wide",
		"examples/tour/main.go imports " + mod + "/integration",
		"examples/wide/helper.go imports " + mod + "/integration/crashtest",
		"examples/wide/helper.go imports " + mod + "/internal/wtoken",
		"examples/wide/main.go imports " + mod + "/examples/bucket",
		"examples/wide/main.go imports " + mod + "/integration/azurite",
		"integration/azurite/a.go imports " + mod + "/integration",
		"integration/faults/f.go imports " + mod + "/entity",
		"integration/seamtest/s.go imports " + mod + "/patterns/bucket",
		"integration/up.go imports " + mod + "/patterns/eventual",
		"integration/x/examples.go imports " + mod + "/examples/demo",
		"internal/a/in_test.go imports " + mod + "/integration",
		"internal/a/up.go imports " + mod + "/entity",
		"internal/b/b.go imports " + mod,
		"internal/internalx/x.go imports " + mod + "/patterns/eventual",
		"keys/keys.go imports " + mod + "/internal/ident",
		"patterns/drift/d.go imports " + mod + "/patterns/eventual",
		"patterns/eventual/e.go imports " + mod + "/patterns/large",
		"patterns/internal/indexset/i.go imports " + mod + "/patterns/secondaryindex",
		"patterns/wide/kit.go imports " + mod + "/patterns/internal/patterntest",
		"patterns/wide/sub/s.go imports " + mod + "/patterns/bucket",
		"patterns/wide/wide.go imports " + mod + "/integration",
		"resolver/r.go imports " + mod + "/patterns/eventual",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
