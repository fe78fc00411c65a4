package indexset

import (
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/errline"
)

// BadRow reports an error of one entity that no retry fixes: it does not
// decode, its keys are invalid, or its value makes no key. A refused
// configuration or declaration, which matches entity.ErrInvalid too, is
// not one: it stops the scan.
func BadRow[P Package](err error) bool {
	var ve *entity.ValidationError
	var ke *KeyError[P]
	var re *RowKeyError[P]
	return errors.Is(err, entity.ErrDecode) || errors.As(err, &ve) || errors.As(err, &ke) || errors.As(err, &re)
}

// JoinRows joins the errors of bad rows, the first ten in full.
func JoinRows[P Package](rows []error) error {
	if len(rows) > 10 {
		var p P
		rows = append(rows[:10:10], fmt.Errorf("%s: and %d more rows that cannot be checked", p.Name(), len(rows)-10))
	}
	return errline.Join(rows...)
}
