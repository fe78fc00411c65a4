package readme

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Block is one Go code block of a README and the file it is tied to.
type Block struct {
	Line   int    // README line of the opening fence, from 1
	File   string // path relative to the repository root; "" if not compiled
	Region string // region name after '#'; "" for the unnamed region or the whole file
	Code   string // the block's text, without the fences
}

const (
	fileMarker        = "<!-- file: "
	notCompiledMarker = "<!-- not compiled: "
	markerEnd         = " -->"
	beginComment      = "// readme:begin"
	endComment        = "// readme:end"
)

// Blocks returns the Go code blocks of a README. Every Go block must be
// preceded (blank lines aside) by a file or not-compiled marker, and every
// marker must be followed by a Go block; otherwise Blocks reports the line.
func Blocks(readme []byte) ([]Block, error) {
	var (
		blocks  []Block
		pending *Block // a marker waiting for its block
		open    *Block // the block being read
		lang    string
		code    strings.Builder
		n       int
	)
	sc := bufio.NewScanner(bytes.NewReader(readme))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if open != nil || lang != "" { // inside a fence
			if trimmed == "```" {
				if open != nil {
					open.Code = code.String()
					blocks = append(blocks, *open)
				}
				open, lang = nil, ""
				code.Reset()
				continue
			}
			if open != nil {
				code.WriteString(line)
				code.WriteByte('\n')
			}
			continue
		}
		switch {
		case strings.HasPrefix(trimmed, "```"):
			lang = strings.TrimPrefix(trimmed, "```")
			if lang == "" {
				lang = "text"
			}
			if lang != "go" {
				if pending != nil {
					return nil, fmt.Errorf("README line %d: a marker is followed by a %s block, not a Go block", pending.Line, lang)
				}
				continue
			}
			if pending == nil {
				return nil, fmt.Errorf("README line %d: a Go block without %q or %q before it", n, fileMarker+"path"+markerEnd, notCompiledMarker+"reason"+markerEnd)
			}
			open, pending = pending, nil
			open.Line = n
		case strings.HasPrefix(trimmed, fileMarker), strings.HasPrefix(trimmed, notCompiledMarker):
			if pending != nil {
				return nil, fmt.Errorf("README line %d: a marker is not followed by a Go block", pending.Line)
			}
			if !strings.HasSuffix(trimmed, markerEnd) {
				return nil, fmt.Errorf("README line %d: a marker does not end with %q", n, markerEnd)
			}
			b := &Block{Line: n}
			if rest, ok := strings.CutPrefix(trimmed, fileMarker); ok {
				ref := strings.TrimSpace(strings.TrimSuffix(rest, markerEnd))
				b.File, b.Region, _ = strings.Cut(ref, "#")
				if b.File == "" {
					return nil, fmt.Errorf("README line %d: a file marker without a path", n)
				}
			}
			pending = b
		case trimmed != "" && pending != nil:
			return nil, fmt.Errorf("README line %d: a marker is not followed by a Go block", pending.Line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if open != nil || lang != "" {
		return nil, fmt.Errorf("README: a code block is not closed")
	}
	if pending != nil {
		return nil, fmt.Errorf("README line %d: a marker is not followed by a Go block", pending.Line)
	}
	return blocks, nil
}

// Excerpt returns the text a block tied to src shows: src itself, or its
// region named name with the region's common indentation removed.
func Excerpt(src []byte, name string) (string, error) {
	begin := beginComment
	if name != "" {
		begin += " " + name
	}
	var (
		lines          []string
		found, inside  bool
		beginLine, idx int
	)
	for line := range strings.Lines(string(src)) {
		idx++
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == begin:
			if found {
				return "", fmt.Errorf("line %d: a second %q", idx, begin)
			}
			found, inside, beginLine = true, true, idx
		case inside && strings.HasPrefix(trimmed, beginComment):
			return "", fmt.Errorf("line %d: %q inside the region begun on line %d", idx, trimmed, beginLine)
		case inside && trimmed == endComment:
			inside = false
		case inside:
			lines = append(lines, strings.TrimRight(line, "\n"))
		}
	}
	if !found {
		if name == "" {
			return string(src), nil // no region: the whole file
		}
		return "", fmt.Errorf("no %q", begin)
	}
	if inside {
		return "", fmt.Errorf("the region begun on line %d has no %q", beginLine, endComment)
	}
	return strings.Join(dedent(lines), "\n"), nil
}

// dedent removes the leading white space that every non-blank line shares.
func dedent(lines []string) []string {
	prefix, first := "", true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ws := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = ws, false
			continue
		}
		for !strings.HasPrefix(ws, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimPrefix(l, prefix)
	}
	return out
}

// normalize drops trailing white space of every line and blank lines at
// either end.
func normalize(s string) []string {
	var lines []string
	for l := range strings.Lines(s) {
		lines = append(lines, strings.TrimRight(l, " \t\r\n"))
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Compare reports where a block differs from the excerpt it shows, or nil.
func Compare(b Block, excerpt string) error {
	got, want := normalize(b.Code), normalize(excerpt)
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if i >= len(got) || i >= len(want) || g != w {
			return fmt.Errorf("README line %d differs from %s: README has %q, the file has %q", b.Line+1+i, b.ref(), g, w)
		}
	}
	return nil
}

func (b Block) ref() string {
	if b.Region != "" {
		return b.File + "#" + b.Region
	}
	return b.File
}

// Check compares every tied Go block of the README at root/README.md with
// its file and returns one error per difference, and the blocks it read.
func Check(root string) ([]Block, []error) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return nil, []error{err}
	}
	blocks, err := Blocks(readme)
	if err != nil {
		return nil, []error{err}
	}
	var errs []error
	for _, b := range blocks {
		if b.File == "" {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(b.File)))
		if err != nil {
			errs = append(errs, fmt.Errorf("README line %d: %w", b.Line, err))
			continue
		}
		excerpt, err := Excerpt(src, b.Region)
		if err != nil {
			errs = append(errs, fmt.Errorf("README line %d: %s: %w", b.Line, b.ref(), err))
			continue
		}
		if err := Compare(b, excerpt); err != nil {
			errs = append(errs, err)
		}
	}
	return blocks, errs
}
