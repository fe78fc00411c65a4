// Package edmvalue compares property values the way the Table service
// keeps them, for tablekit's packages that must tell whether a stored
// entity holds what was written (entity's settling of lost replies, the
// index checkers).
package edmvalue

import (
	"bytes"
	"time"

	"github.com/google/uuid"
)

// Equal reports whether a and b are the same stored value: times are the
// same instant, byte slices and GUIDs hold the same bytes, and a
// whole-number Double equals the Int32 or Int64 of the same number, since
// a Double read without its annotation comes back as an integer.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case uuid.UUID:
		y, ok := b.(uuid.UUID)
		return ok && x == y
	case float64:
		switch y := b.(type) {
		case float64:
			return x == y
		case int32:
			return x == float64(y)
		case int64:
			return x == float64(y)
		}
		return false
	case int32, int64:
		if y, ok := b.(float64); ok {
			return Equal(y, a)
		}
	}
	return a == b
}
