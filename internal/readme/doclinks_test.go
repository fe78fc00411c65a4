package readme

import (
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// bracketed is a name in brackets, as a doc link is written.
var bracketed = regexp.MustCompile(`\[\*?[A-Za-z][A-Za-z0-9_.]*\]`)

// TestDocLinks fails when a package comment has a [Name] that resolves to
// no identifier, package or link definition: the link was mistyped, or the
// identifier was renamed or moved without the doc.
func TestDocLinks(t *testing.T) {
	root := "../.."
	err := filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); dir != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(dir, "doc.go")); err != nil {
			return nil
		}
		for _, bad := range unresolvedLinks(t, dir) {
			t.Errorf("%s/doc.go: %s does not resolve", dir, bad)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func unresolvedLinks(t *testing.T, dir string) []string {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string][]*ast.File{} // by package name
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		pkgs[f.Name.Name] = append(pkgs[f.Name.Name], f)
	}
	var bad []string
	for name, files := range pkgs {
		dp, err := doc.NewFromFiles(fset, files, "example.com/"+name)
		if err != nil {
			t.Fatal(err)
		}
		var walk func([]comment.Text)
		walk = func(ts []comment.Text) {
			for i, x := range ts {
				switch x := x.(type) {
				case comment.Plain:
					s := string(x)
					for _, m := range bracketed.FindAllStringIndex(s, -1) {
						// Table[T], [OpenTable][T]: a type argument, not a link.
						if m[0] > 0 && (s[m[0]-1] == '_' || isAlnum(s[m[0]-1])) {
							continue
						}
						if _, link := previous(ts, i).(*comment.DocLink); link && m[0] == 0 {
							continue
						}
						bad = append(bad, s[m[0]:m[1]])
					}
				case *comment.Link:
					walk(x.Text)
				}
			}
		}
		for _, b := range dp.Parser().Parse(dp.Doc).Content {
			switch b := b.(type) {
			case *comment.Paragraph:
				walk(b.Text)
			case *comment.Heading:
				walk(b.Text)
			case *comment.List:
				for _, it := range b.Items {
					for _, c := range it.Content {
						if pp, ok := c.(*comment.Paragraph); ok {
							walk(pp.Text)
						}
					}
				}
			}
		}
	}
	return bad
}

// previous is the text before ts[i], or nil.
func previous(ts []comment.Text, i int) comment.Text {
	if i == 0 {
		return nil
	}
	return ts[i-1]
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func TestDocLinksFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	src := "// Package p has [F], [G], [fmt.Println], a [guide] link, a\n// Table[T] and a [Missing] one.\n//\n// [guide]: https://example.com\npackage p\n\nimport \"fmt\"\n\nfunc F() { fmt.Println() }\n\ntype G struct{}\n"
	if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if bad := unresolvedLinks(t, dir); len(bad) != 1 || bad[0] != "[Missing]" {
		t.Errorf("unresolvedLinks = %q, want [[Missing]]", bad)
	}
}
