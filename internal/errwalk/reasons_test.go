package errwalk_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/argerr"
)

// TestReasonConstantsAgree: a Reason constant that several packages export
// (ReasonNil, ReasonZeroValue, ReasonNegative) has one value everywhere,
// internal/argerr's, so a caller comparing ConfigError.Reason compares
// alike whichever package refused the argument.
func TestReasonConstantsAgree(t *testing.T) {
	want := map[string]string{"ReasonNil": argerr.Nil, "ReasonZeroValue": argerr.ZeroValue, "ReasonNegative": argerr.Negative}
	seen := 0
	root, _ := filepath.Abs("../..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				w, ok := want[name.Name]
				if !ok || i >= len(vs.Values) {
					continue
				}
				seen++
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Errorf("%s: %s is not a literal: go doc would not show its value", fset.Position(name.Pos()), name.Name)
					continue
				}
				if got, _ := strconv.Unquote(lit.Value); got != w {
					t.Errorf("%s: %s is %s, want %q", fset.Position(name.Pos()), name.Name, lit.Value, w)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 5 {
		t.Fatalf("found %d Reason constants: the walk does not see the module", seen)
	}
}
