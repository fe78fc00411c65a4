package entityfields_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
)

type employee struct {
	Dept string `table:"PartitionKey,pk"`
	ID   string `table:"RowKey,rk"`
	ETag string `table:",etag"`
	Name string
}

// TestHooks: package entity fills every hook, and each refuses what is not
// an entity with a *entity.TypeError, never a panic.
func TestHooks(t *testing.T) {
	if entityfields.SetSystem == nil || entityfields.SetWritten == nil || entityfields.RowKeyFieldOf == nil || entityfields.PropertiesOf == nil {
		t.Fatal("a hook is nil although package entity is linked in")
	}
	e := &employee{Name: "n"}
	if err := entityfields.SetSystem(e, entityfields.System{PartitionKey: "P", RowKey: "R", ETag: "e"}); err != nil || *e != (employee{"P", "R", "e", "n"}) {
		t.Fatalf("SetSystem: %+v %v", e, err)
	}
	if err := entityfields.SetWritten(e, "f"); err != nil || e.ETag != "f" {
		t.Fatalf("SetWritten: %+v %v", e, err)
	}
	f, err := entityfields.RowKeyFieldOf(reflect.TypeFor[employee]())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Set(e, "S"); err != nil || e.ID != "S" {
		t.Fatalf("RowKeyField.Set: %+v %v", e, err)
	}
	if rk, err := f.Get(e); rk != "S" || err != nil {
		t.Fatalf("RowKeyField.Get = %q, %v", rk, err)
	}
	for _, bad := range []any{nil, employee{}, (*employee)(nil), new(int), &struct{ Name string }{}} {
		if err := entityfields.SetSystem(bad, entityfields.System{}); !errors.Is(err, entity.ErrInvalidType) {
			t.Errorf("SetSystem(%T): %v", bad, err)
		}
		if err := entityfields.SetWritten(bad, ""); !errors.Is(err, entity.ErrInvalidType) {
			t.Errorf("SetWritten(%T): %v", bad, err)
		}
		if _, err := f.Get(bad); !errors.Is(err, entity.ErrInvalidType) {
			t.Errorf("RowKeyField.Get(%T): %v", bad, err)
		}
	}
	for _, bad := range []reflect.Type{nil, reflect.TypeFor[int](), reflect.TypeFor[struct{ Name string }]()} {
		if f, err := entityfields.RowKeyFieldOf(bad); !errors.Is(err, entity.ErrInvalidType) || f != nil {
			t.Errorf("RowKeyFieldOf(%v): %v, %v", bad, f, err)
		}
	}
}

// TestOnlyEntityWritesTheHooks parses the module's Go files: an assignment
// to a hook anywhere but package entity fails the test, so the hooks stay
// write-once.
func TestOnlyEntityWritesTheHooks(t *testing.T) {
	root := filepath.Join("..", "..")
	var hooks []string
	for _, name := range []string{"SetSystem", "SetWritten", "RowKeyFieldOf"} {
		hooks = append(hooks, "entityfields."+name)
	}
	writers := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok {
				return true
			}
			for _, lhs := range as.Lhs {
				sel, ok := lhs.(*ast.SelectorExpr)
				if !ok {
					continue
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "entityfields" {
					for _, h := range hooks {
						if h == "entityfields."+sel.Sel.Name {
							writers[filepath.ToSlash(filepath.Dir(path))+" "+h] = true
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	entityDir := filepath.ToSlash(filepath.Join(root, "entity"))
	for w := range writers {
		if !strings.HasPrefix(w, entityDir+" ") {
			t.Errorf("%s is assigned outside package entity", w)
		}
	}
	if len(writers) != len(hooks) {
		t.Errorf("package entity sets %d of the %d hooks: %v", len(writers), len(hooks), writers)
	}
}
