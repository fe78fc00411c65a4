package filter

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// A small reference reader of the filter grammar the Table service takes,
// independent of the builder: the tests render with the builder and read
// back with this, so an escaping bug cannot hide in shared code.

type tokKind int

const (
	tokIdent tokKind = iota + 1
	tokString
	tokTyped // datetime'…', guid'…', X'…'
	tokNumber
	tokOpen
	tokClose
)

type token struct {
	kind tokKind
	text string // identifier/number text, the unescaped string, or prefix+'content' for typed
}

var errUnterminated = errors.New("unterminated string literal")

// readStringLiteral reads a quoted literal at the start of s (s[0] is a
// single quote) and returns its value and the number of bytes consumed.
// Inside, two quotes stand for one; a single quote ends the literal.
func readStringLiteral(s string) (string, int, error) {
	if s == "" || s[0] != '\'' {
		return "", 0, errors.New("no opening quote")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), i + 1, nil
	}
	return "", 0, errUnterminated
}

func tokenize(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ':
			i++
		case c == '(':
			out = append(out, token{kind: tokOpen, text: "("})
			i++
		case c == ')':
			out = append(out, token{kind: tokClose, text: ")"})
			i++
		case c == '\'':
			v, n, err := readStringLiteral(s[i:])
			if err != nil {
				return nil, err
			}
			out = append(out, token{kind: tokString, text: v})
			i += n
		default:
			j := i
			for j < len(s) && s[j] != ' ' && s[j] != '(' && s[j] != ')' && s[j] != '\'' {
				j++
			}
			word := s[i:j]
			if j < len(s) && s[j] == '\'' {
				switch word {
				case "datetime", "guid", "X":
					v, n, err := readStringLiteral(s[j:])
					if err != nil {
						return nil, err
					}
					out = append(out, token{kind: tokTyped, text: word + "'" + v + "'"})
					i = j + n
					continue
				}
				return nil, errors.New("word glued to a quote: " + word)
			}
			if word == "" {
				return nil, errors.New("empty word")
			}
			kind := tokIdent
			if c == '-' || c >= '0' && c <= '9' {
				kind = tokNumber
			}
			out = append(out, token{kind: kind, text: word})
			i = j
		}
	}
	return out, nil
}

// azuriteNumber is Azurite 3.37's number token (QueryLexer.peekWord).
var azuriteNumber = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?L?$`)

func parseDouble(lit string) (float64, error) {
	if !azuriteNumber.MatchString(lit) || strings.HasSuffix(lit, "L") {
		return 0, errors.New("not a double literal Azurite reads: " + lit)
	}
	return strconv.ParseFloat(lit, 64)
}
