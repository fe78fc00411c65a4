package resolver

import (
	"bytes"
	"encoding/json"

	"github.com/tablekit/tablekit/entity"
)

// peek reads the few top-level properties of an entity body that choose its
// type, without decoding the rest: a single forward pass that stops as soon
// as it has what it was asked for. It checks the JSON only as far as it
// reads; the decoder that runs next checks the whole body.
//
// Strings are returned raw (between the quotes); esc says whether they hold
// escapes, which rawValue.text resolves.

type rawValue struct {
	b     []byte
	found bool
	str   bool // a JSON string; b is its content
	esc   bool // the string holds escape sequences
}

// text returns the value as a Go string; ok is false for a non-string or a
// malformed string.
func (r rawValue) text() (string, bool) {
	if !r.found || !r.str {
		return "", false
	}
	if !r.esc {
		return string(r.b), true
	}
	return unescape(r.b)
}

// unescape resolves the escapes of raw string content, the rare case.
func unescape(content []byte) (string, bool) {
	q := make([]byte, 0, len(content)+2)
	q = append(q, '"')
	q = append(q, content...)
	q = append(q, '"')
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		return "", false
	}
	return s, true
}

// What peek looks for.
const (
	wantPK uint8 = 1 << iota
	wantRK
	wantETag
	wantTimestamp
	wantDisc
)

type head struct {
	pk, rk, etag, ts, disc rawValue
}

// peek scans body for the properties in want; disc names the discriminator
// property.
func peek(body []byte, want uint8, disc string) (head, error) {
	var h head
	i := skipWS(body, 0)
	if i >= len(body) || body[i] != '{' {
		return h, syntaxErr(i, "an entity body must be a JSON object")
	}
	i = skipWS(body, i+1)
	if i < len(body) && body[i] == '}' {
		return h, nil
	}
	for {
		if i >= len(body) || body[i] != '"' {
			return h, syntaxErr(i, "expected a property name")
		}
		end, esc, ok := scanString(body, i)
		if !ok {
			return h, syntaxErr(i, "unterminated property name")
		}
		key := body[i+1 : end-1]
		i = skipWS(body, end)
		if i >= len(body) || body[i] != ':' {
			return h, syntaxErr(i, "expected ':'")
		}
		i = skipWS(body, i+1)
		var v rawValue
		v, i, ok = scanValue(body, i)
		if !ok {
			return h, syntaxErr(i, "malformed value")
		}
		if esc {
			s, ok := unescape(key)
			if !ok {
				return h, syntaxErr(i, "malformed property name")
			}
			key = []byte(s)
		}
		var slot *rawValue
		var bit uint8
		if want&wantDisc != 0 && string(key) == disc {
			slot, bit = &h.disc, wantDisc
		} else if want&^wantDisc != 0 {
			switch string(key) {
			case "PartitionKey":
				slot, bit = &h.pk, wantPK
			case "RowKey":
				slot, bit = &h.rk, wantRK
			case "odata.etag":
				slot, bit = &h.etag, wantETag
			case "Timestamp":
				slot, bit = &h.ts, wantTimestamp
			}
		}
		if slot != nil && want&bit != 0 {
			*slot = v
			want &^= bit
			if want == 0 {
				return h, nil
			}
		}
		i = skipWS(body, i)
		if i >= len(body) {
			return h, syntaxErr(i, "unterminated object")
		}
		switch body[i] {
		case ',':
			i = skipWS(body, i+1)
		case '}':
			return h, nil
		default:
			return h, syntaxErr(i, "expected ',' or '}'")
		}
	}
}

func syntaxErr(offset int, reason string) error {
	return &entity.DecodeError{Offset: offset, Reason: reason}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString reads the string whose opening quote is at b[i] and returns the
// index after its closing quote, and whether it holds escapes. Property
// names and most values are short: a plain loop beats searching.
func scanString(b []byte, i int) (end int, esc bool, ok bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return j + 1, esc, true
		case '\\':
			esc = true
			j++ // the escaped character, which may be a quote
		}
	}
	return len(b), esc, false
}

// scanValue reads the value at b[i] and returns it and the index after it.
func scanValue(b []byte, i int) (rawValue, int, bool) {
	if i >= len(b) {
		return rawValue{}, i, false
	}
	switch b[i] {
	case '"':
		end, esc, ok := scanString(b, i)
		if !ok {
			return rawValue{}, end, false
		}
		return rawValue{b: b[i+1 : end-1], found: true, str: true, esc: esc}, end, true
	case '{', '[':
		end, ok := skipNested(b, i)
		return rawValue{b: b[i:end], found: true}, end, ok
	}
	j := i
	for j < len(b) {
		c := b[j]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		j++
	}
	if j == i {
		return rawValue{}, i, false
	}
	return rawValue{b: b[i:j], found: true}, j, true
}

// skipNested skips the object or array at b[i].
func skipNested(b []byte, i int) (int, bool) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			end, _, ok := scanString(b, i)
			if !ok {
				return end, false
			}
			i = end
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return i, false
}

// find returns the value of the top-level property whose name, followed by
// a quote and a colon, is key (`EntityType":`), found with a substring
// search rather than a scan: much faster on bodies that hold it. ok is
// false when the search cannot decide — the name is absent, written with
// escapes or whitespace, or its value is malformed — and the caller then
// scans with peek. The key leaves out the opening quote because quotes are
// the commonest byte of JSON, which would make the search slow.
//
// A match is a property name when an unescaped quote precedes it: in valid
// JSON such a quote opens a string that ends right after the name and is
// followed by a colon, which only a name is. Entity bodies have no nested
// objects, so a name is top-level.
func find(body, key []byte) (v rawValue, ok bool) {
	from := 0
	for {
		i := bytes.Index(body[from:], key)
		if i < 0 {
			return rawValue{}, false
		}
		i += from
		if i > 0 && body[i-1] == '"' {
			n := 0
			for p := i - 2; p >= 0 && body[p] == '\\'; p-- {
				n++
			}
			if n%2 == 0 {
				v, _, ok := scanValue(body, skipWS(body, i+len(key)))
				return v, ok
			}
		}
		from = i + 1
	}
}

// quotedKey returns `name":`, the form find searches for.
func quotedKey(name string) []byte { return []byte(name + `":`) }

var rowKeyKey = quotedKey("RowKey")
