package indexset

import (
	"context"
	"errors"
	"strings"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/wtoken"
)

// WriteToken is the property of entity's write token chain
// (entity.Table.WithWriteTokens), never a primary's own: a Set carries
// the chain it read into its conditional write, so that entity can tell
// the write's outcome after a lost reply.
const WriteToken = "TkWrite"

// LongestToken is a value of WriteToken as long as entity writes one (a
// root and wtoken.MaxTokens tokens): what a check of an entity that will
// be written with a write token adds for it.
var LongestToken = strings.Repeat("A", 6+8*wtoken.MaxTokens)

// settleRounds bounds the calls DeleteSettled makes.
const settleRounds = 3

// DeleteSettled deletes the entity pk/rk of t whatever its version, as
// entity.Table.DeleteIfExists does, and settles an unknown outcome as
// DeleteIfExists's documentation asks: it repeats the call while the
// answer matches entity.ErrOutcomeUnknown (a reply lost, or every try
// failed before reaching the service), a few times. An outcome still
// unknown is returned, matching entity.ErrOutcomeUnknown: a step that
// meets it has not done its work, and must fail (a message is delivered
// again) rather than take the entity for gone.
func DeleteSettled[T any](ctx context.Context, t *entity.Table[T], pk, rk string) error {
	var err error
	for range settleRounds {
		if _, err = t.DeleteIfExists(ctx, pk, rk); !errors.Is(err, entity.ErrOutcomeUnknown) {
			return err
		}
	}
	return err
}
