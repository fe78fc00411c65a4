package indexset

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/tablekit/tablekit/entity"
)

// WriteToken is the property of entity's write token chain
// (entity.Table.WithWriteTokens), never a primary's own: a Set carries
// the chain it read into its conditional write, so that entity can tell
// the write's outcome after a lost reply.
const WriteToken = "TkWrite"

// Read reads the primary pk/rk as sent by the service; found is false
// when there is none.
func Read(ctx context.Context, raw *entity.Table[json.RawMessage], pk, rk string) (body []byte, found bool, err error) {
	b, err := raw.Get(ctx, pk, rk)
	if errors.Is(err, entity.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// Decode decodes a primary read as sent: as T, and as its properties
// (WriteToken aside), with its ETag and the write token chain it carries
// (nil for none).
func Decode[T any](raw []byte) (e T, bag entity.DynamicEntity, chain any, err error) {
	if err = entity.Unmarshal(raw, &bag); err != nil {
		return e, bag, nil, err
	}
	if err = entity.FromDynamic(&bag, &e); err != nil {
		return e, bag, nil, err
	}
	chain = bag.Properties[WriteToken]
	delete(bag.Properties, WriteToken)
	return e, bag, chain, nil
}

// Intend returns the properties e would be written with, WriteToken
// aside; they are checked by the transaction that sends them.
func Intend[T any](e *T) (*entity.DynamicEntity, error) {
	bag, err := entity.ToDynamic(e)
	if err != nil {
		return nil, err
	}
	delete(bag.Properties, WriteToken)
	return bag, nil
}
