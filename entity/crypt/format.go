package crypt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// The stored format, version 1 (the package doc's Wire format shows an
// example, byte by byte). Everything is little more than length-prefixed
// bytes, so that a reader in any language can follow it.
//
// An encrypted property is an Edm.Binary:
//
//	version (1) | nonce (12) | AES-256-GCM(content key, nonce, plaintext, aad)
//	plaintext = EDM type (1 byte, entity.EDMType: 1 String, 2 Int32, 3 Int64,
//	            4 Double, 5 Boolean, 6 DateTime, 7 Guid, 8 Binary) | the value's text
//	aad       = "tablekit/v1/property" 0x00 | lp(table) | lp(PartitionKey) | lp(RowKey) | lp(property name)
//
// where lp(x) is x's length as a uvarint followed by x, table is the table
// name in lower case (the service's names are case-insensitive), and the
// value's text is what the Table service's JSON carries for it, unescaped —
// a string's characters, a number's or a boolean's literal, the digits of an
// Int64, a DateTime in RFC 3339, a Guid's 36 characters — except for a
// Binary, whose bytes are encrypted rather than their base64.
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
// where ciphertext is the encrypted property's whole stored value, the
// bytes of its Edm.Binary (version | nonce | GCM ciphertext and tag), not
// the GCM output alone, and each list's names come in the list's order.
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

func appendLP[S string | []byte](b []byte, s S) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// metadata is the decoded _tkEnc property. Its slices alias the value it
// was parsed from.
type metadata struct {
	keyID, wrapAlg []byte
	wrapped        []byte
	// names holds the encrypted names, then the signed ones, then the
	// beaconed ones.
	names       [][]byte
	nEnc, nSign int
	nonce       []byte
	tag         []byte
	lists       []byte // the three lists as stored, signed as they are
}

func (m *metadata) encrypted() [][]byte { return m.names[:m.nEnc] }
func (m *metadata) signed() [][]byte    { return m.names[m.nEnc : m.nEnc+m.nSign] }
func (m *metadata) beacons() [][]byte   { return m.names[m.nEnc+m.nSign:] }

// appendEnvelope writes the metadata from its start through the key envelope.
func appendEnvelope(b []byte, keyID, wrapAlg string, wrapped []byte) []byte {
	b = append(b, formatVersion, algAESGCM)
	b = appendLP(b, keyID)
	b = appendLP(b, wrapAlg)
	return appendLP(b, wrapped)
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

// list appends one list's names to names and returns names and the count.
// what names the list in errors ("encrypted", "signed", "beacon").
func (r *metaReader) list(what string, names [][]byte) ([][]byte, int) {
	if r.err != "" {
		return names, 0 // an earlier field failed: say that, unprefixed
	}
	n := r.uvarint("name count", maxNames)
	for range n {
		name := r.bytes("name", maxName)
		if r.err != "" {
			return names, 0
		}
		if len(name) == 0 || !utf8.Valid(name) || bytes.HasPrefix(name, reservedName) {
			r.fail("invalid " + what + " name")
			return names, 0
		}
		names = append(names, name)
	}
	if r.err != "" {
		r.err = errMeta(what + " list: " + string(r.err))
	}
	return names, int(n)
}

// parseMetadata decodes a _tkEnc value, appending its names to names (a
// buffer to reuse, may be nil).
func parseMetadata(b []byte, names [][]byte) (metadata, error) {
	return parseMetadataWith(b, names, nil)
}

// parsedLists is the protected set of a metadata value that parsed and
// passed every check: the lists as stored, and the names, which alias
// that copy.
type parsedLists struct {
	lists       []byte
	names       [][]byte
	nEnc, nSign int
}

// parseMetadataWith is parseMetadata remembering, in last (may be nil), the
// lists it last found valid: the entities of one type under one policy
// store the same lists, byte for byte, so those are not parsed and checked
// again. Only lists identical to ones that passed every check are taken as
// they are.
func parseMetadataWith(b []byte, names [][]byte, last *atomic.Pointer[parsedLists]) (metadata, error) {
	m := metadata{names: names[:0]}
	if len(b) < 2 {
		return m, errMeta("truncated header")
	}
	if b[0] != formatVersion {
		return m, errMeta("unknown format version " + strconv.Itoa(int(b[0])))
	}
	if b[1] != algAESGCM {
		return m, errMeta("unknown algorithm " + strconv.Itoa(int(b[1])))
	}
	r := metaReader{b: b[2:]}
	m.keyID = r.bytes("key id", maxKeyID)
	m.wrapAlg = r.bytes("key-wrap algorithm", maxWrapAlg)
	m.wrapped = r.bytes("wrapped key", maxWrapped)
	listStart := r.b
	if last != nil && r.err == "" {
		if p := last.Load(); p != nil && len(r.b) == len(p.lists)+nonceSize+tagSize && bytes.Equal(r.b[:len(p.lists)], p.lists) {
			m.names = append(m.names, p.names...)
			m.nEnc, m.nSign = p.nEnc, p.nSign
			m.lists = r.b[:len(p.lists)]
			m.nonce, m.tag = r.b[len(p.lists):len(p.lists)+nonceSize], r.b[len(p.lists)+nonceSize:]
			if len(m.keyID) == 0 || len(m.wrapped) == 0 {
				return m, errMeta("no key id or wrapped key")
			}
			return m, nil
		}
	}
	m.names, m.nEnc = r.list("encrypted", m.names)
	m.names, m.nSign = r.list("signed", m.names)
	m.names, _ = r.list("beacon", m.names)
	if r.err != "" {
		return m, r.err
	}
	m.lists = listStart[:len(listStart)-len(r.b)]
	if len(r.b) != nonceSize+tagSize {
		return m, errMeta("signature is " + strconv.Itoa(len(r.b)) + " bytes, not 28")
	}
	m.nonce, m.tag = r.b[:nonceSize], r.b[nonceSize:]
	if len(m.keyID) == 0 || len(m.wrapped) == 0 {
		return m, errMeta("no key id or wrapped key")
	}
	if reason := checkNames(&m); reason != "" {
		return m, errMeta(reason)
	}
	if last != nil {
		p := &parsedLists{lists: bytes.Clone(m.lists), nEnc: m.nEnc, nSign: m.nSign}
		p.names = make([][]byte, len(m.names))
		for i, n := range m.names { // the same names, in the copy
			off := cap(m.lists) - cap(n)
			p.names[i] = p.lists[off : off+len(n) : off+len(n)]
		}
		last.Store(p)
	}
	return m, nil
}

// checkNames: each name once among the encrypted and signed; beacons only
// for encrypted names, each once.
func checkNames(m *metadata) string {
	prot := m.names[:m.nEnc+m.nSign]
	if i, _, dup := duplicate(prot); dup {
		return "property " + string(prot[i]) + " listed twice"
	}
	bs := m.beacons()
	if i, _, dup := duplicate(bs); dup {
		return "beacon " + string(bs[i]) + " listed twice"
	}
	for _, b := range bs {
		found := false
		for _, e := range m.encrypted() {
			if bytes.Equal(b, e) {
				found = true
				break
			}
		}
		if !found {
			return "beacon for " + string(b) + ", which is not encrypted"
		}
	}
	return ""
}

// duplicate finds a name listed twice: pairwise for the usual handful, by
// map beyond.
func duplicate(names [][]byte) (int, int, bool) {
	if len(names) <= 32 {
		for i := range names {
			for j := i + 1; j < len(names); j++ {
				if bytes.Equal(names[i], names[j]) {
					return i, j, true
				}
			}
		}
		return 0, 0, false
	}
	seen := make(map[string]int, len(names))
	for i, n := range names {
		if j, ok := seen[string(n)]; ok {
			return j, i, true
		}
		seen[string(n)] = i
	}
	return 0, 0, false
}

// replaceEnvelope returns a copy of the metadata value b with another key
// envelope, the rest (lists and signature) unchanged: a key rotation.
func replaceEnvelope(b []byte, keyID, wrapAlg string, wrapped []byte) ([]byte, error) {
	m, err := parseMetadata(b, nil)
	if err != nil {
		return nil, err
	}
	out := appendEnvelope(make([]byte, 0, len(b)+len(wrapped)), keyID, wrapAlg, wrapped)
	out = append(out, m.lists...)
	out = append(out, m.nonce...)
	return append(out, m.tag...), nil
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
	return b, fmt.Errorf("value of Go type %T is not an %s", v, edm)
}
