// Package state writes and reads tablekit's resume tokens: the JSON of a
// job's position, compressed, checksummed and base64url-encoded into one
// word a shell passes on unquoted, and saved atomically to a file when
// asked (--checkpoint).
package state

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Prefix starts every token (and names its version).
const Prefix = "tk1."

// ErrBadToken reports a token that is not one of tablekit's, was cut short
// or changed.
var ErrBadToken = errors.New("not a tablekit resume token (cut short, changed, or of another version)")

// Encode returns the token of v.
func Encode(v any) (string, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(j))
	b.Write(sum[:])
	zw, _ := flate.NewWriter(&b, flate.BestCompression)
	zw.Write(j)
	zw.Close()
	return Prefix + base64.RawURLEncoding.EncodeToString(b.Bytes()), nil
}

// Decode reads a token into v.
func Decode(tok string, v any) error {
	tok = strings.TrimSpace(tok)
	rest, ok := strings.CutPrefix(tok, Prefix)
	if !ok {
		return ErrBadToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) < 5 {
		return ErrBadToken
	}
	j, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw[4:])), 64<<20))
	if err != nil || crc32.ChecksumIEEE(j) != binary.BigEndian.Uint32(raw[:4]) {
		return ErrBadToken
	}
	if err := json.Unmarshal(j, v); err != nil {
		return fmt.Errorf("%w: %v", ErrBadToken, err)
	}
	return nil
}

// Load reads the token of --resume: the token itself, or @FILE for the
// token saved in FILE.
func Load(arg string) (string, error) {
	path, ok := strings.CutPrefix(arg, "@")
	if !ok {
		return arg, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// Save writes tok to path atomically: a crash leaves the old token or the
// new one, never half of one.
func Save(path, tok string) error {
	return WriteFileAtomic(path, []byte(tok+"\n"))
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed over path.
func WriteFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
