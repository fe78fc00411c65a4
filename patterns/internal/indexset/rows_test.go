package indexset

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

// TestBadRow: an entity that does not decode, or whose value or keys make
// no valid key, is one bad row; a refused configuration, which matches
// entity.ErrInvalid as well, is not, so a scan stops on it.
func TestBadRow(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&entity.DecodeError{Property: "Age", Reason: "not a number"}, true},
		{&KeyError[pkgA]{Index: "email", Value: "a/b", Err: errors.New("forbidden character")}, true},
		{fmt.Errorf("row: %w", &RowKeyError[pkgA]{RowKey: "email_x", Reason: "starts with an index's prefix"}), true},
		{&entity.ValidationError{Property: "PartitionKey", Value: "a/b", Err: errors.New("forbidden character")}, true},
		{&ConfigError[pkgA]{Field: "Config.Kind", Reason: "is too long"}, false},
		{&DeclarationError[pkgA]{Index: "email", Field: "Key", Reason: "is nil"}, false},
		{entity.ErrPreconditionFailed, false},
	} {
		if got := BadRow[pkgA](tc.err); got != tc.want {
			t.Errorf("BadRow(%v) = %v, want %v", tc.err, got, tc.want)
		}
		if tc.want && !errors.Is(tc.err, entity.ErrInvalid) && !errors.Is(tc.err, entity.ErrDecode) {
			t.Errorf("%v matches neither entity.ErrInvalid nor ErrDecode", tc.err)
		}
	}
	// What makes the difference: a refused configuration matches
	// entity.ErrInvalid as a bad row's key does.
	for _, err := range []error{&ConfigError[pkgA]{Field: "Config.Kind"}, &DeclarationError[pkgA]{Index: "email"}} {
		if !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("%v does not match entity.ErrInvalid", err)
		}
	}
}
