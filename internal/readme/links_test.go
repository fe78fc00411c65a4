package readme

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is the target of a Markdown link; inlineCode a code span.
var (
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
)

// slug is the anchor GitHub gives a heading: lower case, without
// punctuation but for '-' and '_', spaces turned into '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdScan returns the anchors of a Markdown file's headings and the targets
// of its links, outside code blocks.
func mdScan(src []byte) (anchors map[string]bool, links []string) {
	anchors = map[string]bool{}
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if h := strings.TrimLeft(line, "#"); len(h) < len(line) && strings.HasPrefix(h, " ") {
			anchors[slug(strings.TrimSpace(h))] = true
		}
		for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
			links = append(links, m[1])
		}
	}
	return anchors, links
}

// TestLinks fails on a relative link of README.md or docs/*.md that names
// no file of the repository, or an anchor that names no heading.
func TestLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{filepath.Join(root, "README.md")}, docs...)
	if len(files) < 3 {
		t.Errorf("found %q: want the README and the pages of docs/", files)
	}
	anchorsOf := map[string]map[string]bool{}
	read := func(path string) map[string]bool {
		if a, ok := anchorsOf[path]; ok {
			return a
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := mdScan(src)
		anchorsOf[path] = a
		return a
	}
	checked := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		_, links := mdScan(src)
		for _, l := range links {
			if strings.Contains(l, "://") || strings.HasPrefix(l, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(l, "#")
			target := file
			if path != "" {
				target = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s links to %s: no such file", file, l)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(target, ".md") && !read(target)[anchor] {
				t.Errorf("%s links to %s: no heading has the anchor #%s", file, l, anchor)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d links: the scan finds too few", checked)
	}
}

func TestSlugAndScan(t *testing.T) {
	for h, want := range map[string]string{
		"Lost replies: outcomes that are never wrong": "lost-replies-outcomes-that-are-never-wrong",
		"Backup, restore and migration":               "backup-restore-and-migration",
		"Keys: one way per job":                       "keys-one-way-per-job",
		"Codec, `Table[T]` and resolver":              "codec-tablet-and-resolver",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
	anchors, links := mdScan([]byte("# A b\n[x](y.md#a-b) [z](#q) `f[T](c)`\n```\n[no](code.md)\n## not a heading\n```\n#nospace\n"))
	if !anchors["a-b"] || len(anchors) != 1 || strings.Join(links, " ") != "y.md#a-b #q" {
		t.Errorf("anchors %v, links %q", anchors, links)
	}
}
