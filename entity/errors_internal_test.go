package entity

import (
	"errors"
	"testing"
)

// TestInvalidTokenOneLine: a token of another query is ErrInvalidToken in
// one line that says why.
func TestInvalidTokenOneLine(t *testing.T) {
	pk := "a"
	token := continuation{pk: &pk}.encode(1)
	_, err := decodeToken(token, 2)
	const want = "entity: invalid continuation token: the token belongs to a query of another table, filter or select, or was changed"
	if !errors.Is(err, ErrInvalidToken) || err.Error() != want {
		t.Errorf("a token of another query: %q; want %q matching ErrInvalidToken", err, want)
	}
	if c, err := decodeToken(token, 1); err != nil || c.pk == nil || *c.pk != pk {
		t.Errorf("the token of this query: %+v, %v", c, err)
	}
}
