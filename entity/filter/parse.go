package filter

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/internal/argerr"
)

// ParseError is filter text that Parse cannot read, at a byte offset (from
// 0). It matches ErrInvalidFilter and entity.ErrInvalid. Like Error, it
// never quotes the text, so it is safe to log.
type ParseError struct {
	Pos    int
	Reason string
}

func (e *ParseError) Error() string {
	if e == nil {
		return "filter: <nil>"
	}
	return fmt.Sprintf("filter: at character %d: %s", e.Pos+1, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidFilter) and errors.Is(err,
// entity.ErrInvalid) true.
func (e *ParseError) Is(target error) bool {
	return target == ErrInvalidFilter || target == argerr.Err
}

// Parse reads OData $filter text — typed by a user, kept in a file — into an
// Expr, so that what reaches the Table service is what this package builds
// from it (every literal typed and escaped, every property name checked),
// never the text itself. It builds the expression once, so an expression
// the package refuses (an invalid property name) is an error here, before
// any request; the number of comparisons is left to the service. The empty
// text (or only spaces) is the empty expression. Errors are *ParseError or
// *Error.
//
// The grammar is the Table service's: comparisons "Name op literal" (or
// "literal op Name") with the operators eq, ne, gt, ge, lt, le, combined
// with and, or, not and parentheses (not binds tightest, then and, then or).
// Literals are 'text' (a quote inside doubled), integers (Int32; with an L
// suffix, or beyond Int32's range, Int64), numbers with a decimal point or
// exponent (Double; an optional d, m or f suffix), true and false,
// datetime'2024-01-02T03:04:05Z', guid'…', and X'0aff' or binary'0aff'.
// Keywords and literal prefixes are read in any case. FuzzParse checks that
// Parse of what an Expr builds gives back the same text.
func Parse(text string) (Expr, error) {
	if !utf8.ValidString(text) {
		return Expr{}, &ParseError{Pos: 0, Reason: "the filter is not valid UTF-8"}
	}
	p := &parser{src: text}
	if err := p.lex(); err != nil {
		return Expr{}, err
	}
	if len(p.toks) == 0 {
		return Expr{}, nil
	}
	e, err := p.or()
	if err != nil {
		return Expr{}, err
	}
	if p.i < len(p.toks) {
		t := p.toks[p.i]
		return Expr{}, &ParseError{Pos: t.pos, Reason: fmt.Sprintf("unexpected %s after a complete expression", t.describe())}
	}
	if _, err := e.Build(); err != nil {
		return Expr{}, err
	}
	return e, nil
}

type parseKind int

const (
	tWord parseKind = iota + 1 // a name, keyword, number, true/false
	tString
	tTyped // datetime'…', guid'…', X'…', binary'…'
	tOpen
	tClose
)

type parseToken struct {
	kind   parseKind
	text   string // the word, or a literal's unescaped content
	prefix string // for tTyped, lower case
	pos    int
}

func (t parseToken) describe() string {
	switch t.kind {
	case tString:
		return "a string literal"
	case tTyped:
		return t.prefix + " literal"
	case tOpen:
		return "'('"
	case tClose:
		return "')'"
	}
	return strconv.Quote(t.text)
}

type parser struct {
	src  string
	toks []parseToken
	i    int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *parser) lex() error {
	s := p.src
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isSpace(c):
			i++
		case c == '(':
			p.toks = append(p.toks, parseToken{kind: tOpen, pos: i})
			i++
		case c == ')':
			p.toks = append(p.toks, parseToken{kind: tClose, pos: i})
			i++
		case c == '\'':
			v, n, err := quoted(s, i)
			if err != nil {
				return err
			}
			p.toks = append(p.toks, parseToken{kind: tString, text: v, pos: i})
			i += n
		default:
			j := i
			for j < len(s) && !isSpace(s[j]) && s[j] != '(' && s[j] != ')' && s[j] != '\'' {
				j++
			}
			word := s[i:j]
			if j < len(s) && s[j] == '\'' {
				prefix := strings.ToLower(word)
				switch prefix {
				case "datetime", "guid", "x", "binary":
				default:
					return &ParseError{Pos: i, Reason: fmt.Sprintf("%q before a quote is not a literal prefix (datetime, guid, X, binary)", word)}
				}
				v, n, err := quoted(s, j)
				if err != nil {
					return err
				}
				p.toks = append(p.toks, parseToken{kind: tTyped, prefix: prefix, text: v, pos: i})
				i = j + n
				continue
			}
			p.toks = append(p.toks, parseToken{kind: tWord, text: word, pos: i})
			i = j
		}
	}
	return nil
}

// quoted reads the literal starting at s[at] == '\”: its content, with ”
// for ', and the bytes it took.
func quoted(s string, at int) (string, int, error) {
	var b strings.Builder
	for i := at + 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), i + 1 - at, nil
	}
	return "", 0, &ParseError{Pos: at, Reason: "unterminated string literal (a quote inside a string is written twice: 'O''Brien')"}
}

func (p *parser) peekWord(words ...string) bool {
	if p.i >= len(p.toks) || p.toks[p.i].kind != tWord {
		return false
	}
	for _, w := range words {
		if strings.EqualFold(p.toks[p.i].text, w) {
			return true
		}
	}
	return false
}

func (p *parser) end() int {
	if p.i < len(p.toks) {
		return p.toks[p.i].pos
	}
	return len(p.src)
}

func (p *parser) or() (Expr, error) {
	e, err := p.and()
	if err != nil {
		return e, err
	}
	parts := []Expr{e}
	for p.peekWord("or") {
		p.i++
		r, err := p.and()
		if err != nil {
			return r, err
		}
		parts = append(parts, r)
	}
	if len(parts) == 1 {
		return e, nil
	}
	return Or(parts...), nil
}

func (p *parser) and() (Expr, error) {
	e, err := p.unary()
	if err != nil {
		return e, err
	}
	parts := []Expr{e}
	for p.peekWord("and") {
		p.i++
		r, err := p.unary()
		if err != nil {
			return r, err
		}
		parts = append(parts, r)
	}
	if len(parts) == 1 {
		return e, nil
	}
	return And(parts...), nil
}

func (p *parser) unary() (Expr, error) {
	if p.peekWord("not") {
		p.i++
		e, err := p.unary()
		if err != nil {
			return e, err
		}
		return Not(e), nil
	}
	if p.i < len(p.toks) && p.toks[p.i].kind == tOpen {
		open := p.toks[p.i]
		p.i++
		e, err := p.or()
		if err != nil {
			return e, err
		}
		if p.i >= len(p.toks) || p.toks[p.i].kind != tClose {
			return e, &ParseError{Pos: open.pos, Reason: "'(' without its ')'"}
		}
		p.i++
		return e, nil
	}
	return p.comparison()
}

var ops = map[string]Op{"eq": OpEq, "ne": OpNe, "gt": OpGt, "ge": OpGe, "lt": OpLt, "le": OpLe}

// flipped is the operator with its operands swapped: 5 lt Age is Age gt 5.
var flipped = map[Op]Op{OpEq: OpEq, OpNe: OpNe, OpGt: OpLt, OpGe: OpLe, OpLt: OpGt, OpLe: OpGe}

func (p *parser) comparison() (Expr, error) {
	if p.i >= len(p.toks) {
		return Expr{}, &ParseError{Pos: len(p.src), Reason: "expected a comparison such as Name eq 'value', found the end"}
	}
	left := p.toks[p.i]
	if left.kind == tClose {
		return Expr{}, &ParseError{Pos: left.pos, Reason: "unexpected ')'"}
	}
	p.i++
	if p.i >= len(p.toks) || p.toks[p.i].kind != tWord {
		return Expr{}, &ParseError{Pos: p.end(), Reason: fmt.Sprintf("expected an operator (eq, ne, gt, ge, lt, le) after %s", left.describe())}
	}
	opTok := p.toks[p.i]
	op, ok := ops[strings.ToLower(opTok.text)]
	if !ok {
		return Expr{}, &ParseError{Pos: opTok.pos, Reason: fmt.Sprintf("%q is not an operator (eq, ne, gt, ge, lt, le)", opTok.text)}
	}
	p.i++
	if p.i >= len(p.toks) {
		return Expr{}, &ParseError{Pos: len(p.src), Reason: fmt.Sprintf("expected a value after %q", opTok.text)}
	}
	right := p.toks[p.i]
	p.i++
	if isName(left) && !isName(right) {
		v, err := literal(right)
		if err != nil {
			return Expr{}, err
		}
		return Compare(left.text, op, v), nil
	}
	if isName(right) && !isName(left) {
		v, err := literal(left)
		if err != nil {
			return Expr{}, err
		}
		return Compare(right.text, flipped[op], v), nil
	}
	if isName(left) {
		return Expr{}, &ParseError{Pos: left.pos, Reason: fmt.Sprintf("a comparison needs a property and a value; %q and %q are both names (quote a string value: '…')", left.text, right.text)}
	}
	return Expr{}, &ParseError{Pos: left.pos, Reason: "a comparison needs a property name on one side"}
}

// isName: a word that is not a number or a keyword literal.
func isName(t parseToken) bool {
	if t.kind != tWord || t.text == "" {
		return false
	}
	c := t.text[0]
	if c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9') {
		return false
	}
	switch strings.ToLower(t.text) {
	case "true", "false", "null", "and", "or", "not":
		return false
	}
	return true
}

func literal(t parseToken) (Value, error) {
	bad := func(format string, a ...any) (Value, error) {
		return Value{}, &ParseError{Pos: t.pos, Reason: fmt.Sprintf(format, a...)}
	}
	switch t.kind {
	case tString:
		return String(t.text), nil
	case tTyped:
		switch t.prefix {
		case "datetime":
			tm, err := time.Parse(time.RFC3339Nano, t.text)
			if err != nil {
				return bad("datetime'%s' is not an RFC 3339 time such as 2024-01-02T03:04:05Z", t.text)
			}
			return Time(tm), nil
		case "guid":
			u, err := uuid.Parse(t.text)
			if err != nil || len(t.text) != 36 {
				return bad("guid'%s' is not a GUID such as 6f9619ff-8b86-d011-b42d-00c04fc964ff", t.text)
			}
			return GUID(u), nil
		default: // x, binary
			b, err := hex.DecodeString(t.text)
			if err != nil {
				return bad("%s'…' holds no even number of hex digits", t.prefix)
			}
			return Binary(b), nil
		}
	case tWord:
	default:
		return bad("expected a value, found %s", t.describe())
	}
	w := t.text
	switch strings.ToLower(w) {
	case "true":
		return Bool(true), nil
	case "false":
		return Bool(false), nil
	case "null":
		return bad("null has no literal the Table service compares with: a property that is absent matches no comparison")
	}
	if n := len(w); n > 1 && (w[n-1] == 'L' || w[n-1] == 'l') {
		v, err := strconv.ParseInt(w[:n-1], 10, 64)
		if err != nil {
			return bad("%s is not an Int64 (digits with an L suffix, within ±9223372036854775807)", w)
		}
		return Int64(v), nil
	}
	if isInteger(w) {
		v, err := strconv.ParseInt(w, 10, 64)
		if err != nil {
			return bad("%s is beyond Int64's range", w)
		}
		if v >= math.MinInt32 && v <= math.MaxInt32 {
			return Int32(int32(v)), nil
		}
		return Int64(v), nil
	}
	num := w
	if n := len(num); n > 1 && strings.ContainsRune("dDmMfF", rune(num[n-1])) {
		num = num[:n-1]
	}
	if f, err := strconv.ParseFloat(num, 64); looksNumeric(num) && (err == nil || errors.Is(err, strconv.ErrRange)) {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return bad("%s has no finite Double value", w)
		}
		return Double(f), nil
	}
	return bad("%q is not a value: quote a string ('%s'), or write a number, true, false, datetime'…', guid'…' or X'…'", w, strings.ReplaceAll(w, "'", "''"))
}

func isInteger(w string) bool {
	s := strings.TrimPrefix(strings.TrimPrefix(w, "-"), "+")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// looksNumeric refuses what ParseFloat reads but a filter does not mean as a
// number: Inf, NaN, hex floats, underscores.
func looksNumeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9') && c != '.' && c != '-' && c != '+' && c != 'e' && c != 'E' {
			return false
		}
	}
	return true
}
