package indexset

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
)

// Beacon keys the rows of an index of an encrypted property (the
// packages' Index.Encrypted) by the property's beacon instead of its
// value: crypt's keyed HMAC of the value (entity.Table.Beacon), in
// lower-case hex, which no row, message or error of the index holds the
// value of. A nil *Beacon is an index of values in clear.
type Beacon struct {
	// Property is the encrypted property the index's values come from.
	Property string
	// Len is how many bytes of the beacon the keys keep: BeaconBytes; a
	// test seam cuts it, so that values collide.
	Len int
	of  func(value string) ([]byte, bool, error)
}

// BeaconBytes is the length of an index's beacons: crypt's, whole.
const BeaconBytes = 16

// NewBeacon returns the Beacon of an index declared Encrypted: prop, of
// the encrypted primary table prot (nil for a plain table); prop is a
// stored property's name or its field's Go path. When the declaration
// cannot hold — T stores no such property, prot is plain, or stores prop in clear,
// encrypts it for some entities only, or without a beacon — it returns
// the reason, for the package's *DeclarationError of field Encrypted.
func NewBeacon[T any](prot *entity.Table[T], prop string) (*Beacon, string) {
	st, err := entityfields.StoredOf(reflect.TypeFor[T]())
	if err != nil {
		return nil, err.Error()
	}
	prop, reason := st.Resolve(prop)
	if reason != "" {
		return nil, reason
	}
	named := "names " + strconv.Quote(prop)
	if prot == nil {
		return nil, named + " but the primary table is not encrypted (give crypt.Table.Entity, or leave Encrypted empty)"
	}
	always, maybe := prot.Encrypts(prop)
	switch {
	case !maybe:
		return nil, named + ", which the table stores in clear: leave Encrypted empty to index it as it is, or tag it encrypt"
	case !always:
		return nil, named + ", which crypt's Config.Encrypt encrypts for some entities only: tag it encrypt, so that every entity has its beacon"
	}
	if _, _, err := prot.Beacon(prop, ""); err != nil {
		return nil, named + ", whose beacon cannot be computed of a string value: " + err.Error()
	}
	return &Beacon{Property: prop, Len: BeaconBytes, of: func(value string) ([]byte, bool, error) { return prot.Beacon(prop, value) }}, ""
}

// KeyText is value as index's keys hold it: value itself for an index in
// clear (b nil), else the hex of its beacon; an error is a *KeyError that
// names the property, never the value.
func KeyText[P Package](b *Beacon, index, value string) (string, error) {
	if b == nil {
		return value, nil
	}
	sum, _, err := b.of(value)
	if err != nil {
		return "", &KeyError[P]{Index: index, Value: "(encrypted " + b.Property + ")", Err: err}
	}
	return hex.EncodeToString(sum[:min(len(sum), b.Len)]), nil
}

// minSecret is the shortest encrypted value CheckUndeclared looks for in
// the values of indexes in clear: shorter ones would match by chance.
const minSecret = 6

// CheckUndeclared refuses, before any request, a write of e whose value
// in an index in clear (plain: index name to value) holds the value of a
// property the encrypted primary table encrypts, compared without case,
// when that value has minSecret bytes or more: an index function cannot
// be seen into, and an index of an encrypted property declared without
// Encrypted would key its rows by the plaintext. The *KeyError names the
// property, not the value. A plain table (c.Protected nil) refuses
// nothing.
func (c *Core[P, T, X]) CheckUndeclared(e *T, plain map[string]string) error {
	if c.Protected == nil || len(plain) == 0 {
		return nil
	}
	d, err := c.Protected.ToDynamic(e)
	if err != nil {
		return err
	}
	for prop, v := range d.Properties {
		secret, ok := v.(string)
		if !ok || len(secret) < minSecret {
			continue
		}
		if _, maybe := c.Protected.Encrypts(prop); !maybe {
			continue
		}
		secret = strings.ToLower(secret)
		for index, value := range plain {
			if strings.Contains(strings.ToLower(value), secret) {
				return &KeyError[P]{Index: index, Value: "(the value of encrypted property " + prop + ")", Err: fmt.Errorf("%w: the index's value holds the encrypted property %s in clear: declare Index.Encrypted %q", entity.ErrInvalid, prop, prop)}
			}
		}
	}
	return nil
}
