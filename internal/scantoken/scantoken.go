// Package scantoken is the one encoding of the resume tokens that
// tablekit's checkers hand out (patterns/secondaryindex,
// patterns/indexentity, patterns/denormalize): a small struct saying where
// a scan stands, as JSON in base64url behind a prefix that names (and
// versions) the package that made it. A token is opaque to its users and
// read back strictly: a wrong prefix, unknown fields, trailing data, or any
// spelling other than the one Encode writes (CR or LF in the base64, JSON
// with spaces or members Encode leaves out) make it invalid.
package scantoken

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Encode returns prefix followed by v as base64url JSON.
func Encode(prefix string, v any) string {
	b, _ := json.Marshal(v) // the tokens are plain structs: no error
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// Decode reads a token made by Encode with the same prefix into v, a
// pointer to the token's struct. It reports false for anything else;
// what a valid token may hold is its caller's to check.
func Decode(prefix, s string, v any) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return false
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	// One spelling per position: base64 skips CR and LF, and JSON allows
	// spaces, escapes and zero values Encode leaves out.
	return d.Decode(v) == nil && !d.More() && Encode(prefix, v) == s
}
