package crypt

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// The stored format, version 1. Everything is little more than
// length-prefixed bytes, so that a reader in any language can follow it.
//
// An encrypted property is an Edm.Binary:
//
//	version (1) | nonce (12) | AES-256-GCM(content key, nonce, plaintext, aad)
//	plaintext = EDM type (1 byte, entity.EDMType) | the value's text
//	aad       = "tablekit/v1/property" 0x00 | lp(table) | lp(PartitionKey) | lp(RowKey) | lp(property name)
//
// where lp(x) is x's length as a uvarint followed by x, table is the table
// name in lower case (the service's names are case-insensitive), and the
// value's text is what the Table service's JSON carries for it, unescaped:
// a string's characters, a number's or a boolean's literal, the digits of an
// Int64, a DateTime in RFC 3339, a Guid's 36 characters, a Binary's base64.
//
// The metadata property _tkEnc is an Edm.Binary:
//
//	version (1) | algorithm (1, 1 = AES-256-GCM)
//	lp(key id) | lp(key-wrap algorithm) | lp(wrapped content key)     the key envelope
//	list(encrypted) | list(signed) | list(beacons)                   the protected set
//	nonce (12) | tag (16)                                            the entity's signature
//
// where list(names) is a uvarint count followed by lp(name) per name. The
// signature is GMAC (AES-256-GCM sealing nothing) under the content key over
//
//	"tablekit/v1/entity" 0x00 | lp(table) | lp(PartitionKey) | lp(RowKey) |
//	version | algorithm | the three lists as stored |
//	lp(ciphertext) per encrypted name | EDM type, lp(canonical value) per
//	signed name | lp(beacon) per beacon name
//
// so adding, removing, swapping or changing any protected property, or
// changing the lists, is detected. The key envelope is not signed: a changed
// envelope yields no content key or another one, which fails every check
// anyway, and leaving it out lets a key rotation rewrite the envelope alone.
//
// An equality beacon is the Edm.Binary _tkEq_<name>:
//
//	HMAC-SHA256(beacon key, "tablekit/v1/beacon" 0x00 | lp(table) | lp(name) | EDM type | canonical value)[:16]
//
// A canonical value is a typed value's bytes: a String's UTF-8, an Int32 or
// Int64 big-endian, a Double's IEEE 754 bits big-endian (negative zero as
// zero), a Boolean 0 or 1, a DateTime's .NET ticks (100 ns since
// 0001-01-01) big-endian, a Guid's 16 bytes, a Binary's bytes.

// Reserved property names.
const (
	// MetadataProperty holds an entity's key envelope, protected set and
	// signature.
	MetadataProperty = "_tkEnc"
	// BeaconPrefix starts the name of a property's equality beacon.
	BeaconPrefix = "_tkEq_"
	// ReservedPrefix starts every name this package writes; user
	// properties may not start with it.
	ReservedPrefix = "_tk"
)

const (
	formatVersion = 1
	algAESGCM     = 1
	keySize       = 32
	nonceSize     = 12
	tagSize       = 16
	beaconSize    = 16
	// overhead of an encrypted property over its plaintext.
	propertyOverhead = 1 + nonceSize + tagSize

	propertyAADLabel = "tablekit/v1/property\x00"
	entityMACLabel   = "tablekit/v1/entity\x00"
	beaconLabel      = "tablekit/v1/beacon\x00"

	// Parsing limits: generous, and far below what would let a hostile
	// metadata property make the parser allocate much.
	maxKeyID   = 2048
	maxWrapAlg = 64
	maxWrapped = 2048
	maxName    = 1024
	maxNames   = entity.MaxUserProperties
)

func appendLP(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendLPBytes(b, s []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// metadata is the decoded _tkEnc property.
type metadata struct {
	keyID, wrapAlg             string
	wrapped                    []byte
	encrypted, signed, beacons []string
	nonce                      [nonceSize]byte
	tag                        [tagSize]byte
	lists                      []byte // the three lists as stored, signed as they are
}

// appendEnvelope writes the metadata from its start through the key envelope.
func appendEnvelope(b []byte, keyID, wrapAlg string, wrapped []byte) []byte {
	b = append(b, formatVersion, algAESGCM)
	b = appendLP(b, keyID)
	b = appendLP(b, wrapAlg)
	return appendLPBytes(b, wrapped)
}

func appendList(b []byte, names []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		b = appendLP(b, n)
	}
	return b
}

// errMeta is a metadata parse failure; the caller adds the entity's keys.
type errMeta string

func (e errMeta) Error() string { return string(e) }

// metaReader reads the metadata's fields, refusing anything out of bounds.
type metaReader struct {
	b   []byte
	err errMeta
}

func (r *metaReader) fail(reason string) {
	if r.err == "" {
		r.err = errMeta(reason)
	}
	r.b = nil
}

func (r *metaReader) uvarint(what string, max uint64) uint64 {
	if r.err != "" {
		return 0
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.fail("truncated " + what)
		return 0
	}
	if n > max {
		r.fail(what + " too long")
		return 0
	}
	r.b = r.b[k:]
	return n
}

func (r *metaReader) bytes(what string, max int) []byte {
	n := r.uvarint(what, uint64(max))
	if r.err != "" {
		return nil
	}
	if uint64(len(r.b)) < n {
		r.fail("truncated " + what)
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *metaReader) list(what string) []string {
	n := r.uvarint(what+" count", maxNames)
	if r.err != "" || n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		name := r.bytes(what+" name", maxName)
		if r.err != "" {
			return nil
		}
		if len(name) == 0 || !utf8.Valid(name) || strings.HasPrefix(string(name), ReservedPrefix) {
			r.fail("invalid " + what + " name")
			return nil
		}
		out = append(out, string(name))
	}
	return out
}

// parseMetadata decodes a _tkEnc value. The result's slices alias b.
func parseMetadata(b []byte) (metadata, error) {
	var m metadata
	if len(b) < 2 {
		return m, errMeta("truncated header")
	}
	if b[0] != formatVersion {
		return m, errMeta("unknown format version " + itoa(int(b[0])))
	}
	if b[1] != algAESGCM {
		return m, errMeta("unknown algorithm " + itoa(int(b[1])))
	}
	r := metaReader{b: b[2:]}
	m.keyID = string(r.bytes("key id", maxKeyID))
	m.wrapAlg = string(r.bytes("key-wrap algorithm", maxWrapAlg))
	m.wrapped = r.bytes("wrapped key", maxWrapped)
	listStart := r.b
	m.encrypted = r.list("encrypted")
	m.signed = r.list("signed")
	m.beacons = r.list("beacon")
	if r.err != "" {
		return m, r.err
	}
	m.lists = listStart[:len(listStart)-len(r.b)]
	if len(r.b) != nonceSize+tagSize {
		return m, errMeta("signature is " + itoa(len(r.b)) + " bytes, not 28")
	}
	copy(m.nonce[:], r.b)
	copy(m.tag[:], r.b[nonceSize:])
	if m.keyID == "" || len(m.wrapped) == 0 {
		return m, errMeta("no key id or wrapped key")
	}
	// Each name once; beacons only for encrypted names; nothing both
	// encrypted and signed.
	seen := make(map[string]byte, len(m.encrypted)+len(m.signed))
	for _, n := range m.encrypted {
		if seen[n] != 0 {
			return m, errMeta("property " + n + " listed twice")
		}
		seen[n] = 'e'
	}
	for _, n := range m.signed {
		if seen[n] != 0 {
			return m, errMeta("property " + n + " listed twice")
		}
		seen[n] = 's'
	}
	for _, n := range m.beacons {
		if seen[n] != 'e' {
			return m, errMeta("beacon for " + n + ", which is not encrypted")
		}
		seen[n] = 'b'
	}
	return m, nil
}

// replaceEnvelope returns a copy of the metadata value b with another key
// envelope, the rest (lists and signature) unchanged: a key rotation.
func replaceEnvelope(b []byte, keyID, wrapAlg string, wrapped []byte) ([]byte, error) {
	m, err := parseMetadata(b)
	if err != nil {
		return nil, err
	}
	out := appendEnvelope(make([]byte, 0, len(b)+len(wrapped)), keyID, wrapAlg, wrapped)
	out = append(out, m.lists...)
	out = append(out, m.nonce[:]...)
	return append(out, m.tag[:]...), nil
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// appendCanonical appends the canonical bytes of a typed value: the signed
// and beaconed form, independent of how the service writes the value in
// JSON.
func appendCanonical(b []byte, edm entity.EDMType, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		if edm == entity.EDMString {
			return append(b, x...), nil
		}
	case int32:
		if edm == entity.EDMInt32 {
			return binary.BigEndian.AppendUint32(b, uint32(x)), nil
		}
	case int64:
		if edm == entity.EDMInt64 {
			return binary.BigEndian.AppendUint64(b, uint64(x)), nil
		}
	case float64:
		if edm == entity.EDMDouble {
			if x == 0 {
				x = 0 // negative zero compares equal to zero
			}
			return binary.BigEndian.AppendUint64(b, math.Float64bits(x)), nil
		}
	case bool:
		if edm == entity.EDMBoolean {
			if x {
				return append(b, 1), nil
			}
			return append(b, 0), nil
		}
	case time.Time:
		if edm == entity.EDMDateTime {
			return binary.BigEndian.AppendUint64(b, uint64(keys.Ticks(x))), nil
		}
	case uuid.UUID:
		if edm == entity.EDMGuid {
			return append(b, x[:]...), nil
		}
	case []byte:
		if edm == entity.EDMBinary {
			return append(b, x...), nil
		}
	}
	return b, errors.New("value of Go type " + typeName(v) + " is not an " + edm.String())
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case string:
		return "string"
	case int32:
		return "int32"
	case int64:
		return "int64"
	case float64:
		return "float64"
	case bool:
		return "bool"
	case time.Time:
		return "time.Time"
	case uuid.UUID:
		return "uuid.UUID"
	case []byte:
		return "[]byte"
	}
	return "other"
}
