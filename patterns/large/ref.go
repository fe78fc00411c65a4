package large

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// Ref is where a blob field's value is kept: the blob's name in the
// table's container, its size in bytes and its SHA-256. The entity stores
// it, as a JSON string property named like the field:
//
//	Photo = {"blob":"employees/Sales/000123/Photo/7b0c…","size":5242880,"sha256":"9f86d0…"}
//
// A field without a value (a nil or empty []byte, "", a zero Stream or
// one whose reader yields nothing) has no property and no blob, and reads
// back as nil, "" or the zero Stream.
type Ref struct {
	Blob   string
	Size   int64
	SHA256 [32]byte
}

// IsZero reports a Ref of no value.
func (r Ref) IsZero() bool { return r == Ref{} }

// maxBlobName is the service's limit on a blob name, in characters.
const maxBlobName = 1024

// wireRef is Ref as stored.
type wireRef struct {
	Blob   string `json:"blob"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// encode returns r as the property value the entity stores.
func (r Ref) encode() string {
	b, _ := json.Marshal(wireRef{Blob: r.Blob, Size: r.Size, SHA256: hex.EncodeToString(r.SHA256[:])})
	return string(b)
}

// parseRef reads a stored reference. Fields it does not know are
// ignored, so that a later version may add some.
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
	case len(w.SHA256) != 64 || strings.ToLower(w.SHA256) != w.SHA256:
		return Ref{}, errors.New("the SHA-256 is not 64 lower-case hex digits")
	}
	r := Ref{Blob: w.Blob, Size: w.Size}
	if _, err := hex.Decode(r.SHA256[:], []byte(w.SHA256)); err != nil {
		return Ref{}, errors.New("the SHA-256 is not 64 lower-case hex digits")
	}
	return r, nil
}
