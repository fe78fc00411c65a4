package entity

import (
	"errors"

	"github.com/tablekit/tablekit/internal/jsonscan"
)

// Bodies are split by tablekit's one JSON scanner, shared with package
// resolver (internal/jsonscan); these names keep the decoder's code short.
type (
	rawProp = jsonscan.Prop
	scanner = jsonscan.Scanner
	tokKind = jsonscan.Kind
)

const (
	tokString    = jsonscan.String
	tokNumber    = jsonscan.Number
	tokTrue      = jsonscan.True
	tokFalse     = jsonscan.False
	tokNull      = jsonscan.Null
	tokNested    = jsonscan.Nested
	tokRawBinary = jsonscan.RawBinary // a decrypted Edm.Binary: the bytes themselves (protect.go)
)

func scanAt(data []byte, i int) scanner            { return jsonscan.At(data, i) }
func unescape(raw []byte) (string, bool)           { return jsonscan.Unescape(raw) }
func stringOf(raw []byte, esc bool) (string, bool) { return jsonscan.StringOf(raw, esc) }

// syntaxErr turns the scanner's *jsonscan.SyntaxError into the
// *DecodeError entity's callers match; other errors pass as they are.
func syntaxErr(err error) error {
	if se, ok := errors.AsType[*jsonscan.SyntaxError](err); ok {
		return &DecodeError{Offset: se.Offset, Reason: se.Reason}
	}
	return err
}

// entityArray returns the entity objects of a query response body.
func entityArray(data []byte, dst [][]byte) ([][]byte, error) {
	dst, err := jsonscan.EntityArray(data, dst)
	return dst, syntaxErr(err)
}
