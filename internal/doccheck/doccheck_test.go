package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the module's root, two levels up.
const root = "../.."

// TestEveryPackageHasADocComment parses every package of the module (and
// of the example modules) and checks that one of its files carries a doc
// comment attached to the package clause — a blank line between them
// detaches it, and go doc then shows nothing — that starts as Go's
// convention says.
func TestEveryPackageHasADocComment(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		switch name := d.Name(); {
		case name == "node_modules", name == "testdata", strings.HasPrefix(name, ".") && path != root, name == "bin":
			return filepath.SkipDir
		}
		pkgs, err := packageClauses(path)
		if err != nil {
			return err
		}
		for name, files := range pkgs {
			checked++
			want := "Package " + name + " "
			if name == "main" {
				want = "Command "
			}
			var docs []string
			for _, f := range files {
				if f.Doc != nil {
					docs = append(docs, f.Doc.Text())
				}
			}
			rel, _ := filepath.Rel(root, path)
			switch {
			case len(docs) == 0:
				t.Errorf("%s: package %s has no doc comment attached to its package clause (a blank line detaches it)", rel, name)
			case len(docs) > 1:
				t.Errorf("%s: package %s has %d doc comments; keep one, in doc.go", rel, name, len(docs))
			case !strings.HasPrefix(docs[0], want):
				t.Errorf("%s: doc comment starts %.40q, want %q", rel, docs[0], want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 40 {
		t.Fatalf("checked %d packages: the walk missed the module", checked)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("root is not the module: %v", err)
	}
}

// packageClauses parses the package clause and doc comment of each non-test
// Go file of dir, by package name.
func packageClauses(dir string) (map[string][]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	out := map[string][]*ast.File{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			return nil, err
		}
		out[f.Name.Name] = append(out[f.Name.Name], f)
	}
	return out, nil
}
