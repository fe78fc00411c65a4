package eventual

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/eventual/internal/queueproc"
)

// TestExportedConstantsShowTheirValues checks what go doc shows of every
// exported constant: its own declaration (go doc abbreviates a group to its
// first member and "...", so `go doc eventual.Result` would hide Retry,
// Poison and Released), with a value written out (no iota, no other
// package's name standing for it; time's units are allowed).
func TestExportedConstantsShowTheirValues(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for _, name := range vs.Names {
					if !name.IsExported() {
						continue
					}
					seen++
					where := fset.Position(name.Pos())
					if len(gd.Specs) > 1 {
						t.Errorf("%s: %s is declared in a group: go doc shows only the group's first member", where, name.Name)
					}
					if len(vs.Values) == 0 {
						t.Errorf("%s: %s has no value of its own", where, name.Name)
						continue
					}
					ast.Inspect(vs.Values[0], func(n ast.Node) bool {
						switch n := n.(type) {
						case *ast.Ident:
							if n.Name == "iota" {
								t.Errorf("%s: %s is iota-based", where, name.Name)
							}
						case *ast.SelectorExpr:
							if pkg, ok := n.X.(*ast.Ident); ok && pkg.Name != "time" {
								t.Errorf("%s: %s is %s.%s, not a value", where, name.Name, pkg.Name, n.Sel.Name)
							}
						}
						return true
					})
				}
			}
		}
	}
	if seen < 20 {
		t.Fatalf("found %d exported constants: the walk is broken", seen)
	}
}

// TestConstantsAgreeWithTheMachinery checks that the values written out
// here are the ones the internal packages act on.
func TestConstantsAgreeWithTheMachinery(t *testing.T) {
	for _, c := range []struct{ got, want any }{
		{ReasonFailed, queueproc.ReasonFailed},
		{ReasonOverdelivered, queueproc.ReasonOverdelivered},
		{MaxMessageBytes, queueproc.MaxMessageBytes},
		{MaxSubmitMessages, entity.MaxBatchOperations},
	} {
		if c.got != c.want {
			t.Errorf("%v, want %v", c.got, c.want)
		}
	}
}
