package errline

import (
	"errors"
	"testing"
)

func TestJoin(t *testing.T) {
	a, b := errors.New("x: first"), errors.New("y: second\nHTTP dump")
	err := Join(nil, a, nil, b)
	if err.Error() != "x: first; y: second" || !errors.Is(err, a) || !errors.Is(err, b) {
		t.Errorf("Join = %q", err)
	}
	if Join(nil, nil) != nil || Join() != nil {
		t.Error("Join of nothing is not nil")
	}
}
