package crypt

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/internal/protect"
)

// Entity returns the table as an *entity.Table[T] that encrypts and
// decrypts under this Table's policy at every call: Get, Insert, Upsert,
// Update, UpdateAny, Modify, Query, QueryPage, QueryPartitions, BulkWrite,
// its batches (NewBatch and Submit), the views entity.ViewAs makes of it
// and WithWriteTokens, and its conversions (Unmarshal, ToDynamic,
// FromDynamic, Seal, Open). Each call binds the policy to its own
// context, which reaches the key-encryption key.
//
// It is how an encrypted table composes with everything that takes an
// *entity.Table[T] — every pattern, package backup, package resolver —
// with no second copy of the rows: whatever those write through it is
// encrypted as this Table's own writes are, whatever they read is checked
// and decrypted, and what the format cannot take is refused before any
// request, as by this Table: Merge (ErrMerge), a filter on an encrypted
// property without a beacon (ErrEncryptedFilter), an entity added to a
// transaction by a view without the protection (entity.ErrInvalid).
// entity.Table.Protected reports true for it, and Encrypts says which
// properties it encrypts, for what takes a table and copies properties
// out of it (a pattern that cannot keep a copy encrypted refuses such a
// table at construction).
//
// A view made by entity.ViewAs encrypts the properties T's tags encrypt,
// and those Config.Encrypt chooses, by name, whatever its own type: a
// pattern's property bags of the table are written and read as T's.
func (t *Table[T]) Entity() *entity.Table[T] {
	if t.ok() != nil {
		return nil
	}
	return t.ent
}

// guard is the Table's protection as entity binds it (protect.Guard).
type guard[T any] struct{ t *Table[T] }

func (g guard[T]) Bind(ctx context.Context, op string, beaconed bool) protect.Scheme {
	c := g.t.core.bind(ctx)
	c.op, c.beaconed = op, beaconed
	return c
}

func (g guard[T]) Query(q any, partitions []string, fanOut bool) (any, bool, error) {
	return g.t.query(q.(entity.Query), partitions, fanOut)
}

func (g guard[T]) Refuse(op string) error { return errMerge(op) }

func (g guard[T]) Encrypts(property string) (always, maybe bool) {
	if g.t.core.tags[property]&protect.Encrypt != 0 {
		return true, true
	}
	return false, g.t.core.mayEncrypt(property)
}

// addTags records the modes the tags of T (its fields, list) and of the
// other types of Config.Types give their properties.
func (c *core) addTags(hooks *protect.Hooks, self reflect.Type, list []protect.Field, types []any) error {
	add := func(t reflect.Type, fields []protect.Field) error {
		for _, f := range fields {
			if f.Mode == 0 {
				continue
			}
			if c.tags == nil {
				c.tags = map[string]protect.Mode{}
			}
			if m, ok := c.tags[f.Name]; ok && m != f.Mode {
				return &ConfigError{Field: "Config.Types", Reason: "property " + f.Name + " is tagged " + modeName(f.Mode) + " in " + t.String() + " and " + modeName(m) + " in another type of the table"}
			}
			c.tags[f.Name] = f.Mode
		}
		return nil
	}
	if err := add(self, list); err != nil {
		return err
	}
	for i, v := range types {
		t := reflect.TypeOf(v)
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			return &ConfigError{Field: "Config.Types", Reason: "item " + strconv.Itoa(i) + " is not a struct value or a pointer to one"}
		}
		fields, err := hooks.Fields(t)
		if err != nil {
			return err
		}
		for _, f := range fields {
			if strings.HasPrefix(f.Name, ReservedPrefix) {
				return &entity.TypeError{Type: t, Field: f.Name, Reason: "property names starting with " + ReservedPrefix + " are reserved for encryption metadata"}
			}
		}
		if err := add(t, fields); err != nil {
			return err
		}
	}
	return nil
}

func (g guard[T]) Beacon(property string, value any) ([]byte, bool, error) {
	always, maybe := g.Encrypts(property)
	switch {
	case !maybe:
		return nil, false, nil
	case !always:
		return nil, true, &BeaconError{Property: property, Reason: "Config.Encrypt encrypts it for some entities and not others: an index needs it encrypted in every entity (tag it encrypt) or in none (leave it out of Config.Encryptable)"}
	case !g.t.core.beacons[property]:
		return nil, true, &BeaconError{Property: property, Reason: "encrypted without a beacon: list it in Config.Beacons (which reveals equal values) to index it"}
	}
	d, err := entity.ToDynamic((&entity.DynamicEntity{PartitionKey: "k", RowKey: "k"}).Set(property, value))
	if err != nil {
		return nil, true, err
	}
	v := d.Properties[property]
	edm := canonicalEDM(v)
	if f, ok := g.t.fields[property]; ok && f.EDM != 0 && entity.EDMType(f.EDM) != edm {
		return nil, true, &BeaconError{Property: property, Reason: "the property is " + entity.EDMType(f.EDM).String() + ", the value " + edm.String() + ": an equal value of another type never matches"}
	}
	b, err := g.t.core.beacon(nil, property, edm, v)
	if err != nil {
		return nil, true, &BeaconError{Property: property, Reason: err.Error()}
	}
	return b, true, nil
}

// canonicalEDM is the EDM type of a value of entity.DynamicEntity's
// canonical Go types.
func canonicalEDM(v any) entity.EDMType {
	switch v.(type) {
	case string:
		return entity.EDMString
	case int32:
		return entity.EDMInt32
	case int64:
		return entity.EDMInt64
	case float64:
		return entity.EDMDouble
	case bool:
		return entity.EDMBoolean
	case time.Time:
		return entity.EDMDateTime
	case uuid.UUID:
		return entity.EDMGuid
	case []byte:
		return entity.EDMBinary
	}
	return 0
}
