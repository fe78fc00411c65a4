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
// import. Paths are relative to the module root.
type rule struct {
	under string   // the importing packages: this directory and all below it
	may   []string // allowed imports: each of these and all below it
	tests bool     // also check the package's own _test.go files (package x, not x_test)
}

// rules are the layers. External test packages (package x_test) are
// outside the graph — nothing imports them — so a sweep of the public API
// from internal/ (apisweep, errtext) may import what it sweeps.
var rules = []rule{
	{under: "keys", may: nil, tests: true},
	{under: "internal", may: []string{"internal", "keys"}, tests: true},
	{under: "entity", may: []string{"entity", "internal", "keys"}},
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
		for _, r := range rules {
			if !within(dir, r.under) || (test && !r.tests) {
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
				if !slices.ContainsFunc(r.may, func(m string) bool { return within(rel, m) }) {
					out = append(out, violation{path, imp})
				}
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
		if !slices.ContainsFunc(rules, func(r rule) bool { return within(filepath.ToSlash(filepath.Dir(rel)), r.under) }) {
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
	for _, want := range []string{"keys", "internal/jsonscan", "entity/sas", "entity/internal/protect"} {
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
		"keys/keys.go":            src("keys", mod+"/internal/ident"),
		"entity/sas/open.go":      src("sas", mod+"/entity", mod+"/resolver"),
		"entity/sas/open_test.go": src("sas", mod+"/integration"),
		"entity/crypt/c.go":       src("crypt", mod+"/entity/internal/protect", mod+"/entity"),
		"entityx/e.go":            src("entityx", mod+"/patterns/wide"),
		"patterns/wide/wide.go":   src("wide", mod+"/integration"),
		"integration/faults/f.go": src("faults", mod+"/entity"),
		"internal/b/b.go":         src("b", mod),
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
		"entity/sas/open.go imports " + mod + "/resolver",
		"internal/a/in_test.go imports " + mod + "/integration",
		"internal/a/up.go imports " + mod + "/entity",
		"internal/b/b.go imports " + mod,
		"internal/internalx/x.go imports " + mod + "/patterns/eventual",
		"keys/keys.go imports " + mod + "/internal/ident",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
