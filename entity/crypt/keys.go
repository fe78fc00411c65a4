package crypt

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
	"strconv"

	"github.com/tablekit/tablekit/internal/argerr"
)

// KeyWrapper is a key-encryption key (KEK): it wraps the random content key
// of every entity write, and unwraps it when the entity is read. LocalKey is
// one held in memory; package entity/crypt/keyvault adapts an Azure Key
// Vault key. Implementations must be safe for concurrent use.
type KeyWrapper interface {
	// Wrap wraps a content key and names the key and algorithm that did
	// it; both are stored with the entity and passed back to Unwrap.
	Wrap(ctx context.Context, cek []byte) (keyID, algorithm string, wrapped []byte, err error)
	// Unwrap recovers a content key. A keyID the wrapper does not hold is
	// an error matching ErrUnknownKey; a wrapped key that fails its
	// integrity check, one matching ErrUnwrap.
	Unwrap(ctx context.Context, keyID, algorithm string, wrapped []byte) ([]byte, error)
}

// Key-wrap algorithm names, as JSON Web Algorithms and Azure Key Vault
// spell them.
const (
	AlgA128KW   = "A128KW"               // RFC 3394 with a 128-bit key
	AlgA192KW   = "A192KW"               // RFC 3394 with a 192-bit key
	AlgA256KW   = "A256KW"               // RFC 3394 with a 256-bit key
	AlgAESKWPad = "CKM_AES_KEY_WRAP_PAD" // RFC 5649, any AES key size
)

// LocalKey is a key-encryption key held in memory: AES key wrap (RFC 3394;
// RFC 5649 for key material that is not a multiple of 8 bytes). It suits
// tests, and keys kept in a secret store and loaded at start; Azure Key
// Vault keeps the key out of the process (package entity/crypt/keyvault).
type LocalKey struct {
	id    string
	alg   string
	block cipher.Block
}

// NewLocalKey returns a key-encryption key named id (stored with every
// entity it wraps; name the version too, "orders-2026-01", so a rotated key
// gets a new id) from 16, 24 or 32 bytes of key material. An empty id or
// another length is a *ConfigError (matching ErrInvalidConfig).
func NewLocalKey(id string, key []byte) (*LocalKey, error) {
	if id == "" {
		return nil, &ConfigError{Field: "id", Reason: "is empty: a local key needs one"}
	}
	var alg string
	switch len(key) {
	case 16:
		alg = AlgA128KW
	case 24:
		alg = AlgA192KW
	case 32:
		alg = AlgA256KW
	default:
		return nil, &ConfigError{Field: "key", Reason: "is " + strconv.Itoa(len(key)) + " bytes, not 16, 24 or 32"}
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return &LocalKey{id: id, alg: alg, block: b}, nil
}

// ID returns the key's id.
func (k *LocalKey) ID() string {
	if k == nil {
		return ""
	}
	return k.id
}

// Wrap wraps cek by RFC 3394, or RFC 5649 when its length is not a
// multiple of 8 bytes of at least 16.
func (k *LocalKey) Wrap(ctx context.Context, cek []byte) (string, string, []byte, error) {
	if err := k.ready(ctx); err != nil {
		return "", "", nil, err
	}
	if len(cek) >= 16 && len(cek)%8 == 0 {
		w, err := wrapKW(k.block, cek)
		return k.id, k.alg, w, err
	}
	w, err := wrapKWP(k.block, cek)
	return k.id, AlgAESKWPad, w, err
}

// Unwrap reverses Wrap for content keys wrapped under this key's id.
func (k *LocalKey) Unwrap(ctx context.Context, keyID, algorithm string, wrapped []byte) ([]byte, error) {
	if err := k.ready(ctx); err != nil {
		return nil, err
	}
	if keyID != k.id {
		return nil, ErrUnknownKey
	}
	switch algorithm {
	case k.alg:
		return unwrapKW(k.block, wrapped)
	case AlgAESKWPad:
		return unwrapKWP(k.block, wrapped)
	}
	return nil, fmt.Errorf("%w: algorithm %q with a %s key", ErrUnwrap, algorithm, k.alg)
}

// Keyring returns a key-encryption key that wraps with current and unwraps
// with whichever of current and older holds the stored key id: the set a
// table reads with while its keys are rotated (see Table.Rotate).
func Keyring(current KeyWrapper, older ...KeyWrapper) KeyWrapper {
	return keyring(append([]KeyWrapper{current}, older...))
}

type keyring []KeyWrapper

func (r keyring) Wrap(ctx context.Context, cek []byte) (string, string, []byte, error) {
	return r[0].Wrap(ctx, cek)
}

func (r keyring) Unwrap(ctx context.Context, keyID, algorithm string, wrapped []byte) ([]byte, error) {
	for _, k := range r {
		cek, err := k.Unwrap(ctx, keyID, algorithm, wrapped)
		if !errors.Is(err, ErrUnknownKey) {
			return cek, err
		}
	}
	return nil, ErrUnknownKey
}

// ready refuses a nil or zero LocalKey, which NewLocalKey never returns,
// and a nil ctx.
func (k *LocalKey) ready(ctx context.Context) error {
	if k == nil || k.block == nil {
		return &ConfigError{Field: "LocalKey", Reason: argerr.ZeroValue}
	}
	return argerr.Ctx(ctx, ctxError)
}
