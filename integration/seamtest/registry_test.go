package seamtest_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The seams: what every public write is tested against.
const (
	crash = "crash" // crash at request k, before sending and after executing, recovered by a fresh instance
	race  = "race"  // a lost reply with a second writer inside the retry window
	bad   = "bad"   // one bad item among many
)

var seams = []string{crash, race, bad}

// missing starts the entry of a seam that applies but that no test injects
// yet: accepted, and listed by TestSeamMatrix.
const missing = "missing: "

// op is one exported operation taking a context. A write names, per seam,
// the test that injects it ("TestX", in the op's package, or
// "dir:TestX" for a test in another directory of the module), or why the
// seam does not apply ("n/a: …").
type op struct {
	name  string // package.Type.Method or package.Func
	write bool
	tests map[string]string
}

func read(name string) op { return op{name: name} }

func write(name, crashTest, raceTest, badTest string) op {
	return op{name: name, write: true, tests: map[string]string{crash: crashTest, race: raceTest, bad: badTest}}
}

// dirs maps a package name of the registry to its directory.
var dirs = map[string]string{
	"entity":   "entity",
	"crypt":    "entity/crypt",
	"sas":      "entity/sas",
	"resolver": "resolver",
	"backup":   "backup",
	"account":  "account",
	"throttle": "throttle",
}

func dirOf(pkg string) string {
	if d, ok := dirs[pkg]; ok {
		return d
	}
	return "patterns/" + pkg
}

const root = "../.."

// exported lists the exported functions and methods (of exported types)
// whose first parameter is a context.Context, in the packages of dirs and
// every patterns/ package.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	pkgDirs := []string{"entity", "entity/crypt", "entity/sas", "resolver", "backup", "account", "throttle"}
	// Every package the registry names has a directory here.
	entries, err := os.ReadDir(filepath.Join(root, "patterns"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "internal" {
			pkgDirs = append(pkgDirs, "patterns/"+e.Name())
		}
	}
	out := map[string]bool{}
	for _, dir := range pkgDirs {
		for _, f := range parseDir(t, dir, false) {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || !fd.Name.IsExported() || fd.Type.Params.NumFields() == 0 {
					continue
				}
				sel, ok := fd.Type.Params.List[0].Type.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Context" {
					continue
				}
				if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "context" {
					continue
				}
				name := f.Name.Name + "." + fd.Name.Name
				if fd.Recv != nil {
					typ := fd.Recv.List[0].Type
					if s, ok := typ.(*ast.StarExpr); ok {
						typ = s.X
					}
					switch x := typ.(type) {
					case *ast.IndexExpr:
						typ = x.X
					case *ast.IndexListExpr:
						typ = x.X
					}
					id, ok := typ.(*ast.Ident)
					if !ok || !id.IsExported() {
						continue
					}
					name = f.Name.Name + "." + id.Name + "." + fd.Name.Name
				}
				out[name] = true
			}
		}
	}
	return out
}

// parseDir parses the Go files of a directory of the module: its test
// files, or the others (leaving out package main, such as generators).
func parseDir(t *testing.T, dir string, tests bool) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") != tests {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name != "main" {
			files = append(files, f)
		}
	}
	return files
}

// testsIn lists the Test functions of a directory's test files.
func testsIn(t *testing.T, dir string, cache map[string]map[string]bool) map[string]bool {
	t.Helper()
	if m, ok := cache[dir]; ok {
		return m
	}
	m := map[string]bool{}
	for _, f := range parseDir(t, dir, true) {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") {
				m[fd.Name.Name] = true
			}
		}
	}
	cache[dir] = m
	return m
}

// TestRegistryCoversEveryOperation: every exported operation is in the
// registry and every registry entry is exported; every write names, for
// each seam, a test that exists or why the seam does not apply.
func TestRegistryCoversEveryOperation(t *testing.T) {
	api := exported(t)
	listed := map[string]bool{}
	cache := map[string]map[string]bool{}
	for _, o := range registry {
		if listed[o.name] {
			t.Errorf("%s is listed twice", o.name)
		}
		listed[o.name] = true
		if !api[o.name] {
			t.Errorf("%s is in the registry but not an exported operation taking a context", o.name)
		}
		if !o.write {
			continue
		}
		pkg, _, _ := strings.Cut(o.name, ".")
		for _, s := range seams {
			ref := o.tests[s]
			switch {
			case strings.HasPrefix(ref, "n/a: ") && len(ref) > len("n/a: "):
			case strings.HasPrefix(ref, missing) && len(ref) > len(missing):
				// Listed by TestSeamMatrix.
			case strings.HasPrefix(ref, "Test") || strings.Contains(ref, ":Test"):
				dir := dirOf(pkg)
				if d, name, ok := strings.Cut(ref, ":"); ok {
					dir, ref = d, name
				}
				if !testsIn(t, dir, cache)[ref] {
					t.Errorf("%s: %s test %s is not a test of %s", o.name, s, ref, dir)
				}
			default:
				t.Errorf("%s: the %s seam names neither a test nor why it does not apply (%q)", o.name, s, ref)
			}
		}
	}
	var missing []string
	for name := range api {
		if !listed[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		t.Errorf("%s is exported and takes a context but is not in the seam registry: say whether it writes and which tests inject each seam", name)
	}
}

// knownGaps are the seams the registry marks missing, "op seam": a new
// "missing" entry fails TestSeamMatrix until it is listed here, and a gap
// closed by a test must leave the list, so that it only shrinks. It is
// empty: every seam that applies names its test.
var knownGaps = []string{}

// TestSeamMatrix prints the matrix (go test -run SeamMatrix -v): per
// package, the operations, the writes and, per seam, how many writes name
// a test, "n/a" or "missing"; then every seam still missing, which must be
// exactly knownGaps.
func TestSeamMatrix(t *testing.T) {
	// counts: operations, writes, unused, then per seam tested, n/a, missing.
	type counts = [3 + 3*3]int
	per := map[string]*counts{}
	var pkgs []string
	var gaps, gapKeys []string
	var total counts
	for _, o := range registry {
		pkg, _, _ := strings.Cut(o.name, ".")
		c, ok := per[pkg]
		if !ok {
			c = new(counts)
			per[pkg] = c
			pkgs = append(pkgs, pkg)
		}
		c[0]++
		if !o.write {
			continue
		}
		c[1]++
		for i, s := range seams {
			ref := o.tests[s]
			switch {
			case strings.HasPrefix(ref, "n/a: "):
				c[3+3*i+1]++
			case strings.HasPrefix(ref, missing):
				c[3+3*i+2]++
				gaps = append(gaps, o.name+" "+s+": "+strings.TrimPrefix(ref, missing))
				gapKeys = append(gapKeys, o.name+" "+s)
			default:
				c[3+3*i]++
			}
		}
	}
	sort.Strings(pkgs)
	t.Logf("%-15s %4s %6s   %-20s %-20s %-20s", "package", "ops", "writes", "crash test/n-a/miss", "race test/n-a/miss", "bad test/n-a/miss")
	line := func(name string, c *counts) {
		t.Logf("%-15s %4d %6d   %-20s %-20s %-20s", name, c[0], c[1],
			fmt.Sprintf("%d/%d/%d", c[3], c[4], c[5]), fmt.Sprintf("%d/%d/%d", c[6], c[7], c[8]), fmt.Sprintf("%d/%d/%d", c[9], c[10], c[11]))
	}
	for _, p := range pkgs {
		line(p, per[p])
		for i, v := range per[p] {
			total[i] += v
		}
	}
	line("total", &total)
	for _, g := range gaps {
		t.Logf("missing: %s", g)
	}
	sort.Strings(gapKeys)
	if !slices.Equal(gapKeys, knownGaps) {
		t.Errorf("the seams marked missing are\n%s\nnot knownGaps\n%s\n(a new write needs its seam tests; a closed gap leaves knownGaps)", strings.Join(gapKeys, "\n"), strings.Join(knownGaps, "\n"))
	}
}
