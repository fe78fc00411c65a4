package large

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// Ref is where a blob field's value is kept: the blob's name in the
// table's container, its size in bytes and its checksum (Config.Checksum).
// The entity stores it, as a JSON string property named like the field:
//
//	Photo = {"blob":"employees/Sales/000123/Photo/7b0c…","size":5242880,"sha256":"9f86d0…"}
//	Photo = {"blob":"employees/Sales/000123/Photo/7b0c…","size":5242880,"crc32c":"1c291ca3"}
//
// A field without a value (a nil or empty []byte, "", a zero Stream or
// one whose reader yields nothing) has no property and no blob, and reads
// back as nil, "" or the zero Stream.
type Ref struct {
	Blob string
	Size int64
	// Checksum says which of SHA256 and CRC32C the entity recorded; the
	// other is zero.
	Checksum Checksum
	SHA256   [32]byte
	CRC32C   uint32
}

// IsZero reports a Ref of no value.
func (r Ref) IsZero() bool { return r == Ref{} }

// maxBlobName is the service's limit on a blob name, in characters.
const maxBlobName = 1024

// wireRef is Ref as stored: one of the checksums is set.
type wireRef struct {
	Blob   string `json:"blob"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
	CRC32C string `json:"crc32c,omitempty"`
}

// encode returns r as the property value the entity stores.
func (r Ref) encode() string {
	w := wireRef{Blob: r.Blob, Size: r.Size}
	if r.Checksum == ChecksumCRC32C {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], r.CRC32C)
		w.CRC32C = hex.EncodeToString(b[:])
	} else {
		w.SHA256 = hex.EncodeToString(r.SHA256[:])
	}
	b, _ := json.Marshal(w)
	return string(b)
}

// parseRef reads a stored reference. Fields it does not know are
// ignored, so that a later version may add some. A reference with both
// checksums is checked by its SHA-256.
func parseRef(s string) (Ref, error) {
	var w wireRef
	if err := json.Unmarshal([]byte(s), &w); err != nil {
		return Ref{}, err
	}
	switch {
	case w.Blob == "" || utf8.RuneCountInString(w.Blob) > maxBlobName:
		return Ref{}, errors.New("the blob name is empty or longer than 1,024 characters")
	case strings.ContainsRune(w.Blob, utf8.RuneError):
		return Ref{}, errors.New("the blob name is not valid UTF-8")
	case w.Size <= 0:
		return Ref{}, errors.New("the size is not positive")
	}
	r := Ref{Blob: w.Blob, Size: w.Size}
	switch {
	case w.SHA256 != "":
		if !lowerHex(w.SHA256, len(r.SHA256)) {
			return Ref{}, errors.New("the SHA-256 is not 64 lower-case hex digits")
		}
		_, _ = hex.Decode(r.SHA256[:], []byte(w.SHA256))
	case w.CRC32C != "":
		if !lowerHex(w.CRC32C, 4) {
			return Ref{}, errors.New("the CRC-32C is not 8 lower-case hex digits")
		}
		var b [4]byte
		_, _ = hex.Decode(b[:], []byte(w.CRC32C))
		r.Checksum, r.CRC32C = ChecksumCRC32C, binary.BigEndian.Uint32(b[:])
	default:
		return Ref{}, errors.New("it records no checksum (sha256 or crc32c)")
	}
	return r, nil
}

// lowerHex reports whether s is n bytes in lower-case hex digits.
func lowerHex(s string, n int) bool {
	if len(s) != 2*n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
