// Package jsonscan splits the JSON of Table service entities without
// building map[string]any: the one scanner of tablekit, used by package
// entity to decode rows and by package resolver to find the few
// properties that choose a row's Go type.
//
// The service's entity body is one flat JSON object whose values are
// strings, numbers, booleans or null. The scanner splits it into (name,
// raw value) pairs; nested values (which the service never sends) are
// skipped, so a foreign body cannot make decoding fail in surprising ways.
// Syntax errors are *SyntaxError, which each caller turns into its own
// error type.
package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the kind of a raw value.
type Kind uint8

// The kinds of raw values.
const (
	String Kind = iota + 1
	Number
	True
	False
	Null
	Nested    // object or array: skipped
	RawBinary // never scanned: a caller's mark for bytes already decoded from base64
)

// SyntaxError reports malformed JSON at a byte offset.
type SyntaxError struct {
	Offset int
	Reason string
}

func (e *SyntaxError) Error() string {
	return "jsonscan: at byte " + strconv.Itoa(e.Offset) + ": " + e.Reason
}

// Prop is one member of an object: its name and raw value, both slices of
// the scanned data.
type Prop struct {
	Name    []byte // name as written, without quotes (may hold escapes)
	NameEsc bool   // the name has escapes
	Val     []byte // string: contents without quotes; others: the literal
	ValEsc  bool   // string value has escapes
	Kind    Kind
}

// Scanner reads one JSON text forward from a position.
type Scanner struct {
	data []byte
	i    int
}

// New returns a Scanner of data from its first byte.
func New(data []byte) Scanner { return Scanner{data: data} }

// At returns a Scanner of data from offset i.
func At(data []byte, i int) Scanner { return Scanner{data: data, i: i} }

// Pos returns the offset of the next byte to read.
func (s *Scanner) Pos() int { return s.i }

// Skip moves past n bytes the caller knows (a ':' or ',' it wrote itself).
func (s *Scanner) Skip(n int) { s.i += n }

func (s *Scanner) fail(reason string) error {
	return &SyntaxError{Offset: s.i, Reason: reason}
}

// WS skips whitespace.
func (s *Scanner) WS() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Object scans the top-level object into props (appended to dst).
func (s *Scanner) Object(dst []Prop) ([]Prop, error) {
	err := s.Members(func(name []byte, esc bool) error {
		p := Prop{Name: name, NameEsc: esc}
		if err := s.Value(&p); err != nil {
			return err
		}
		dst = append(dst, p)
		return nil
	})
	return dst, err
}

// Members scans one top-level JSON object to the end of the data, calling
// member after each name and colon to scan that member's value (with
// Value). An error from member ends the scan and is returned as is, so a
// caller that has what it wants stops early with an error of its own.
func (s *Scanner) Members(member func(name []byte, esc bool) error) error {
	s.WS()
	if s.i >= len(s.data) || s.data[s.i] != '{' {
		return s.fail("expected '{'")
	}
	s.i++
	s.WS()
	if s.i < len(s.data) && s.data[s.i] == '}' {
		s.i++
		return s.end()
	}
	for {
		s.WS()
		name, esc, err := s.Str()
		if err != nil {
			return err
		}
		s.WS()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return s.fail("expected ':'")
		}
		s.i++
		s.WS()
		if err := member(name, esc); err != nil {
			return err
		}
		s.WS()
		if s.i >= len(s.data) {
			return s.fail("unexpected end of body")
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return s.end()
		default:
			return s.fail("expected ',' or '}'")
		}
	}
}

func (s *Scanner) end() error {
	s.WS()
	if s.i != len(s.data) {
		return s.fail("data after the entity object")
	}
	return nil
}

// Str scans a JSON string and returns its raw contents and whether they
// hold escapes.
func (s *Scanner) Str() ([]byte, bool, error) {
	if s.i >= len(s.data) || s.data[s.i] != '"' {
		return nil, false, s.fail("expected a string")
	}
	s.i++
	start := s.i
	esc := false
	for s.i < len(s.data) {
		// Eight bytes at a time while none is a quote, a backslash or a
		// control character (SWAR: a byte is zero after the XOR, or below
		// 0x20); strings of base64 and text are long runs of such bytes.
		// The lowest flagged byte is exact (a borrow only flags bytes
		// above a true one), so the scan jumps straight to it.
		for s.i+8 <= len(s.data) {
			x := binary.LittleEndian.Uint64(s.data[s.i:])
			const lo, hi = 0x0101010101010101, 0x8080808080808080
			q, b := x^(lo*'"'), x^(lo*'\\')
			if m := ((q-lo)&^q | (b-lo)&^b | (x-lo*0x20)&^x) & hi; m != 0 {
				s.i += bits.TrailingZeros64(m) / 8
				break
			}
			s.i += 8
		}
		if s.i >= len(s.data) {
			break
		}
		c := s.data[s.i]
		switch {
		case c == '"':
			out := s.data[start:s.i]
			s.i++
			return out, esc, nil
		case c == '\\':
			esc = true
			s.i += 2
		case c < 0x20:
			return nil, false, s.fail("control character in string")
		default:
			s.i++
		}
	}
	return nil, false, s.fail("unterminated string")
}

// Value scans the value at the scanner's position into p's Val, ValEsc
// and Kind. A nested value is skipped whole; its Val is its text.
func (s *Scanner) Value(p *Prop) error {
	if s.i >= len(s.data) {
		return s.fail("expected a value")
	}
	switch c := s.data[s.i]; {
	case c == '"':
		v, esc, err := s.Str()
		p.Val, p.ValEsc, p.Kind = v, esc, String
		return err
	case c == '-' || ('0' <= c && c <= '9'):
		start := s.i
		for s.i < len(s.data) {
			c := s.data[s.i]
			if ('0' <= c && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
				s.i++
				continue
			}
			break
		}
		p.Val, p.Kind = s.data[start:s.i], Number
		return nil
	case c == 't':
		return s.literal(p, "true", True)
	case c == 'f':
		return s.literal(p, "false", False)
	case c == 'n':
		return s.literal(p, "null", Null)
	case c == '{' || c == '[':
		start := s.i
		err := s.skipNested()
		p.Val, p.Kind = s.data[start:s.i], Nested
		return err
	}
	return s.fail("unexpected character")
}

func (s *Scanner) literal(p *Prop, lit string, kind Kind) error {
	if len(s.data)-s.i < len(lit) || string(s.data[s.i:s.i+len(lit)]) != lit {
		return s.fail("invalid literal")
	}
	p.Val, p.Kind = s.data[s.i:s.i+len(lit)], kind
	s.i += len(lit)
	return nil
}

// skipNested skips a balanced object or array, minding strings.
func (s *Scanner) skipNested() error {
	depth := 0
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case '"':
			if _, _, err := s.Str(); err != nil {
				return err
			}
			continue
		case '{', '[':
			depth++
			if depth > 64 {
				return s.fail("nesting too deep")
			}
		case '}', ']':
			depth--
			if depth == 0 {
				s.i++
				return nil
			}
		}
		s.i++
	}
	return s.fail("unterminated nested value")
}

// Unescape decodes the contents of a JSON string with escapes. It returns
// false for a malformed escape or invalid UTF-8.
func Unescape(raw []byte) (string, bool) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(raw) {
			return "", false
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			out = append(out, raw[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw[i+2:])
			if !ok {
				return "", false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if len(raw) < i+6 || raw[i] != '\\' || raw[i+1] != 'u' {
					return "", false
				}
				r2, ok := hex4(raw[i+2:])
				if !ok {
					return "", false
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", false
				}
				i += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return "", false
		}
		i += 2
	}
	if !utf8.Valid(out) {
		return "", false
	}
	return string(out), true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// StringOf returns the Go string of a raw string token.
func StringOf(raw []byte, esc bool) (string, bool) {
	if !esc {
		if !utf8.Valid(raw) {
			return "", false
		}
		return string(raw), true
	}
	return Unescape(raw)
}

// EntityArray returns the elements of the "value" array of a query response
// body ({"odata.metadata":…,"value":[{…},{…}]}), each a slice of data.
func EntityArray(data []byte, dst [][]byte) ([][]byte, error) {
	s := Scanner{data: data}
	err := s.Members(func(name []byte, _ bool) error {
		if string(name) == "value" && s.i < len(s.data) && s.data[s.i] == '[' {
			var err error
			dst, err = s.elements(dst)
			return err
		}
		var skip Prop
		return s.Value(&skip)
	})
	return dst, err
}

// elements scans an array of objects, appending each object's bytes.
func (s *Scanner) elements(dst [][]byte) ([][]byte, error) {
	s.i++ // '['
	for {
		s.WS()
		if s.i >= len(s.data) {
			return dst, s.fail("unterminated array")
		}
		switch s.data[s.i] {
		case ']':
			s.i++
			return dst, nil
		case ',':
			s.i++
			continue
		case '{':
			start := s.i
			if err := s.skipNested(); err != nil {
				return dst, err
			}
			dst = append(dst, s.data[start:s.i])
		default:
			return dst, s.fail("expected an entity object")
		}
	}
}
