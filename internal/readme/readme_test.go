package readme

import (
	"strings"
	"testing"
)

// TestREADME fails when a Go block of the repository's README differs from
// the file it is tied to, or is tied to none.
func TestREADME(t *testing.T) {
	blocks, errs := Check("../..")
	for _, err := range errs {
		t.Error(err)
	}
	// The blocks a reader copies first must stay tied: removing a marker
	// is a failure, not a way out of the check.
	tied := map[string]bool{}
	for _, b := range blocks {
		tied[b.ref()] = true
	}
	for _, want := range []string{"examples/quickstart/main.go", "examples/quickstart/main_test.go"} {
		if !tied[want] {
			t.Errorf("no README Go block is tied to %s", want)
		}
	}
}

const program = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"

func TestCompare(t *testing.T) {
	for _, c := range []struct {
		name, block, src, region string
		fail                     bool
	}{
		{name: "same", block: program, src: program},
		{name: "trailing space and blank ends", block: "\n" + strings.ReplaceAll(program, "\n", "  \n") + "\n\n", src: program},
		{name: "a changed line", block: strings.Replace(program, "hi", "ho", 1), src: program, fail: true},
		{name: "a missing line", block: "package main\n", src: program, fail: true},
		{name: "an extra line", block: program + "// more\n", src: program, fail: true},
		{name: "indentation counts", block: strings.Replace(program, "\tprintln", "println", 1), src: program, fail: true},
		{
			name:  "region, dedented",
			block: "x := 1\nif x > 0 {\n\tprintln(x)\n}\n",
			src:   "package p\n\nfunc f() {\n\t// readme:begin\n\tx := 1\n\tif x > 0 {\n\t\tprintln(x)\n\t}\n\t// readme:end\n}\n",
		},
		{
			name:   "named region",
			block:  "b()\n",
			src:    "// readme:begin one\na()\n// readme:end\n// readme:begin two\nb()\n// readme:end\n",
			region: "two",
		},
		{
			name:  "region differs",
			block: "x := 2\n",
			src:   "// readme:begin\nx := 1\n// readme:end\n",
			fail:  true,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			excerpt, err := Excerpt([]byte(c.src), c.region)
			if err != nil {
				t.Fatal(err)
			}
			err = Compare(Block{Line: 10, File: "x.go", Code: c.block}, excerpt)
			if (err != nil) != c.fail {
				t.Errorf("Compare = %v, want failure %v", err, c.fail)
			}
		})
	}
}

func TestExcerptErrors(t *testing.T) {
	for name, c := range map[string]struct{ src, region, want string }{
		"no end":          {"// readme:begin\nx\n", "", "has no"},
		"nested begin":    {"// readme:begin\n// readme:begin a\n// readme:end\n", "", "inside the region"},
		"two regions":     {"// readme:begin\n// readme:end\n// readme:begin\n// readme:end\n", "", "a second"},
		"missing named":   {"// readme:begin a\n// readme:end\n", "b", `no "// readme:begin b"`},
		"unnamed missing": {"// readme:begin a\nx\n// readme:end\n", "", ""}, // the whole file: no error
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Excerpt([]byte(c.src), c.region)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Excerpt: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Excerpt error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestBlocks(t *testing.T) {
	readme := "# t\n\n<!-- file: a/b.go#r -->\n\n```go\nx\n```\n\n```sh\nls\n```\n\n<!-- not compiled: a sketch -->\n```go\ny\n```\n"
	blocks, err := Blocks([]byte(readme))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0] != (Block{Line: 5, File: "a/b.go", Region: "r", Code: "x\n"}) || blocks[1] != (Block{Line: 14, Code: "y\n"}) {
		t.Errorf("Blocks = %+v", blocks)
	}
	for name, c := range map[string]struct{ readme, want string }{
		"unmarked Go block":    {"text\n```go\nx\n```\n", "line 2: a Go block without"},
		"marker before prose":  {"<!-- file: a.go -->\ntext\n```go\nx\n```\n", "line 1: a marker is not followed"},
		"marker before sh":     {"<!-- file: a.go -->\n```sh\nx\n```\n", "a sh block"},
		"marker at the end":    {"```go\n```\n<!-- file: a.go -->\n", "a Go block without"},
		"dangling marker":      {"<!-- not compiled: x -->\n```go\nx\n```\n<!-- file: a.go -->\n", "line 5: a marker is not followed"},
		"unclosed block":       {"<!-- file: a.go -->\n```go\nx\n", "not closed"},
		"marker without path":  {"<!-- file:  -->\n```go\nx\n```\n", "without a path"},
		"marker without close": {"<!-- file: a.go\n```go\nx\n```\n", "does not end"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Blocks([]byte(c.readme))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Blocks error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}
