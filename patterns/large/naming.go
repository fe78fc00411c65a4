package large

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/keys"
)

// Blob names: <prefix><partition>/<row>/<property>/<version>, where the
// keys are escaped to letters, digits, '-', '_' and inner '.', every other
// byte written ~XX (the empty key is "~"), and a key whose escaped form is
// longer than maxSegment is cut short and ends with ~ and a hash of the
// whole key. The version is a random UUID, so every write of a value
// gets a blob of its own, which no other write ever overwrites. The names
// are for people browsing the container; the keys and property a blob
// belongs to are read from its metadata.
const maxSegment = 200

// newBlobName returns a name for a new blob of property prop of the entity
// with keys pk, rk.
func newBlobName(prefix, pk, rk, prop string) string {
	return prefix + segment(pk) + "/" + segment(rk) + "/" + prop + "/" + uuid.NewString()
}

// segment escapes a key for a blob name: readable for the usual keys,
// never "." or "..", never ending in '.', never empty, at most maxSegment
// bytes.
func segment(key string) string {
	if key == "" {
		return "~"
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_',
			c == '.' && i > 0 && i < len(key)-1:
			b.WriteByte(c)
		default:
			b.WriteByte('~')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	s := b.String()
	if len(s) <= maxSegment {
		return s
	}
	sum := sha256.Sum256([]byte(key))
	cut := s[:maxSegment-17]
	if i := strings.LastIndexByte(cut, '~'); i >= len(cut)-2 {
		cut = cut[:i] // not in the middle of an escape
	}
	return cut + "~" + hex.EncodeToString(sum[:8])
}

// Blob metadata: the keys of the entity and the property (base64url of
// their UTF-8, since metadata is ASCII), and the content's checksum in
// hex, under the name of the checksum the entity records.
const (
	metaPK     = "tablekitpk"
	metaRK     = "tablekitrk"
	metaProp   = "tablekitprop"
	metaSHA256 = "tablekitsha256"
	metaCRC32C = "tablekitcrc32c"
)

// owner is what a blob's metadata says it belongs to.
type owner struct {
	pk, rk, prop string
}

// metadata returns the metadata of a new blob of owner o whose content's
// size and checksum are ref's.
func metadata(o owner, ref Ref) map[string]*string {
	enc := base64.RawURLEncoding
	pk, rk, prop := enc.EncodeToString([]byte(o.pk)), enc.EncodeToString([]byte(o.rk)), enc.EncodeToString([]byte(o.prop))
	md := map[string]*string{metaPK: &pk, metaRK: &rk, metaProp: &prop}
	if ref.Checksum == ChecksumCRC32C {
		h := fmt.Sprintf("%08x", ref.CRC32C)
		md[metaCRC32C] = &h
	} else {
		h := hex.EncodeToString(ref.SHA256[:])
		md[metaSHA256] = &h
	}
	return md
}

// ownerOf reads a blob's owner from its metadata (names in any case, as
// services and SDKs change it); ok is false for a blob without them, or
// whose keys are not keys an entity can have.
func ownerOf(md map[string]*string) (o owner, ok bool) {
	var got [3]bool
	for k, v := range md {
		if v == nil {
			continue
		}
		switch strings.ToLower(k) {
		case metaPK:
			b, err := base64.RawURLEncoding.DecodeString(*v)
			o.pk, got[0] = string(b), err == nil
		case metaRK:
			b, err := base64.RawURLEncoding.DecodeString(*v)
			o.rk, got[1] = string(b), err == nil
		case metaProp:
			b, err := base64.RawURLEncoding.DecodeString(*v)
			o.prop, got[2] = string(b), err == nil && len(b) > 0
		}
	}
	// Keys no entity can have (not UTF-8, a '/', …) make a blob foreign.
	ok = got[0] && got[1] && got[2] && keys.Validate(o.pk) == nil && keys.Validate(o.rk) == nil && utf8.ValidString(o.prop)
	return o, ok
}
