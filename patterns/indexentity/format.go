package indexentity

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/internal/indexset"
)

// The stored forms of a list of members: the String properties of an
// index entity and the text of a blob. A member is its primary's RowKey,
// which can hold no control character, so each member is written
// followed by a newline: unambiguous for every key the service allows,
// the empty RowKey included, and readable in any storage browser.

// Property names of an index entity.
const (
	// PropMembers holds the members of an index entity, in key order, each
	// followed by "\n" — the guide's EmployeeIDs. A list longer than one
	// String property (32 K UTF-16 code units) goes on in PropMembers+"2",
	// PropMembers+"3", and so on.
	PropMembers = "Members"
	// PropChunks holds, in a value's first index entity once its list has
	// spilled to continuation entities, one line per continuation entity:
	// its number, a tab, and the first member it may hold ("" for the
	// first one), in key order. It goes on in PropChunks+"2", … like
	// PropMembers.
	PropChunks = "Chunks"
	// PropNextChunk is the number the next continuation entity gets.
	PropNextChunk = "NextChunk"

	propWriteToken = indexset.WriteToken // entity's write token chain, carried on rewrites
)

// blobHeader is the first line of an index blob; the format's version.
const blobHeader = "tablekit.indexentity.v1\n"

// maxMember is the longest member a list holds, in UTF-16 code units: a
// TableWide list's member joins a primary's two keys of up to
// keys.MaxKeyLength, each of whose characters keys.Compound may write as
// two (see memberOK for what each placement's members are).
const maxMember = 4*keys.MaxKeyLength + 1

// validMember checks that m can be a member of some list: a key's
// characters, and not longer than maxMember.
func validMember(m string) error { return keys.ValidateLimit(m, maxMember) }

// appendMember appends m and its terminator.
func appendMember(b []byte, m string) []byte {
	b = append(b, m...)
	return append(b, '\n')
}

// decodeMembers reads a list of members: keys, each followed by "\n".
// It does not require them sorted (see sortedUnique).
func decodeMembers(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	if s[len(s)-1] != '\n' {
		return nil, errors.New("the last member has no terminator")
	}
	out := make([]string, 0, strings.Count(s, "\n"))
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		m := s[:i]
		if err := validMember(m); err != nil {
			return nil, errors.New("member " + strconv.Quote(indexset.Shorten(m)) + " is not a key")
		}
		out = append(out, m)
		s = s[i+1:]
	}
	return out, nil
}

// sortedUnique reports whether ms is in the service's key order without
// repeats, as every list this package writes is.
func sortedUnique(ms []string) bool {
	for i := 1; i < len(ms); i++ {
		if keys.Compare(ms[i-1], ms[i]) >= 0 {
			return false
		}
	}
	return true
}

// normalize sorts ms in key order and drops repeats, in place.
func normalize(ms []string) []string {
	if sortedUnique(ms) {
		return ms
	}
	slices.SortFunc(ms, keys.Compare)
	return slices.Compact(ms)
}

// EncodeBlob returns the text of an index blob holding members (sorted
// and without repeats first): a header line, then one member per line.
func encodeBlob(members []string) []byte {
	n := len(blobHeader)
	for _, m := range members {
		n += len(m) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, blobHeader...)
	for _, m := range members {
		b = appendMember(b, m)
	}
	return b
}

// decodeBlob reads the text of an index blob.
func decodeBlob(data []byte) ([]string, error) {
	rest, ok := bytes.CutPrefix(data, []byte(blobHeader))
	if !ok {
		return nil, errors.New("no " + strings.TrimSpace(blobHeader) + " header")
	}
	return decodeMembers(string(rest))
}

// chunkRef is one continuation entity in a directory.
type chunkRef struct {
	id   int64
	from string // the first member it may hold; "" for the first
}

// encodeDirectory returns the lines of a directory.
func encodeDirectory(dir []chunkRef) []string {
	lines := make([]string, len(dir))
	for i, c := range dir {
		lines[i] = strconv.FormatInt(c.id, 10) + "\t" + c.from + "\n"
	}
	return lines
}

// decodeDirectory reads a directory: at least one entry, the first from
// "", the others in strictly increasing key order, each number once.
func decodeDirectory(s string) ([]chunkRef, error) {
	if s == "" || s[len(s)-1] != '\n' {
		return nil, errors.New("the directory is empty or not terminated")
	}
	var dir []chunkRef
	seen := map[int64]bool{}
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		line := s[:i]
		s = s[i+1:]
		num, from, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, errors.New("a directory line has no tab")
		}
		id, err := strconv.ParseInt(num, 10, 64)
		if err != nil || id < 1 || strconv.FormatInt(id, 10) != num {
			return nil, errors.New("a directory line has no chunk number")
		}
		if seen[id] {
			return nil, errors.New("the directory names chunk " + num + " twice")
		}
		seen[id] = true
		if err := validMember(from); err != nil {
			return nil, errors.New("a directory bound is not a key")
		}
		switch {
		case len(dir) == 0 && from != "":
			return nil, errors.New("the first chunk does not start at the beginning")
		case len(dir) > 0 && keys.Compare(dir[len(dir)-1].from, from) >= 0:
			return nil, errors.New("the directory is not in key order")
		}
		dir = append(dir, chunkRef{id: id, from: from})
	}
	return dir, nil
}

// chunkFor returns the position in dir of the chunk that holds member m:
// the last whose from is not after m.
func chunkFor(dir []chunkRef, m string) int {
	i, _ := slices.BinarySearchFunc(dir, m, func(c chunkRef, m string) int {
		if keys.Compare(c.from, m) <= 0 {
			return -1
		}
		return 1
	})
	return max(i-1, 0)
}

// pack spreads lines over String properties of at most
// entity.MaxStringUnits UTF-16 code units each, named name, name+"2", …,
// into props; a line is never cut.
func pack(props map[string]any, name string, lines []string) {
	var cur strings.Builder
	units, n := 0, 1
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		props[propName(name, n)] = cur.String()
		cur.Reset()
		units = 0
		n++
	}
	for _, l := range lines {
		u := keys.UTF16Len(l)
		if units+u > entity.MaxStringUnits {
			flush()
		}
		cur.WriteString(l)
		units += u
	}
	flush()
}

// unpack joins the String properties name, name+"2", … of props; ok is
// false when one is not a String, or when one is missing before another.
func unpack(props map[string]any, name string) (s string, present, ok bool) {
	var b strings.Builder
	n := 0
	for k, v := range props {
		if !isPiece(k, name) {
			continue
		}
		if _, isString := v.(string); !isString {
			return "", true, false
		}
		n++
	}
	for i := 1; i <= n; i++ {
		v, found := props[propName(name, i)]
		if !found {
			return "", true, false
		}
		b.WriteString(v.(string))
	}
	return b.String(), n > 0, true
}

func propName(name string, i int) string {
	if i == 1 {
		return name
	}
	return name + strconv.Itoa(i)
}

// isPiece reports whether k is name or name followed by a number.
func isPiece(k, name string) bool {
	rest, ok := strings.CutPrefix(k, name)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	n, err := strconv.Atoi(rest)
	return err == nil && n >= 2 && strconv.Itoa(n) == rest
}

// memberLines returns the members as lines for pack.
func memberLines(ms []string) []string {
	lines := make([]string, len(ms))
	for i, m := range ms {
		lines[i] = m + "\n"
	}
	return lines
}

// rowSize is an index entity's size by the service's formula: 4 bytes,
// the keys in UTF-16, and per property 8 bytes, its name in UTF-16 and
// its value (a String: 4 bytes and its UTF-16; an Int64: 8).
func rowSize(pk, rk string, props map[string]any) int {
	n := 4 + 2*(keys.UTF16Len(pk)+keys.UTF16Len(rk))
	for k, v := range props {
		n += 8 + 2*keys.UTF16Len(k)
		switch v := v.(type) {
		case string:
			n += 4 + 2*keys.UTF16Len(v)
		default:
			n += 8
		}
	}
	return n
}

// membersSize is the size the members take in an index entity, about
// (the split of the list over properties adds a few bytes).
func membersSize(ms []string) int {
	n := 0
	for _, m := range ms {
		n += 2 * (keys.UTF16Len(m) + 1)
	}
	return n
}
