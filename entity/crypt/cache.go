package crypt

import (
	"bytes"
	"crypto/cipher"
	"hash/maphash"
	"sync"
)

// keyCache keeps the content keys of entities recently written or read,
// ready to use (an AES-GCM instance), by their key id, algorithm and
// wrapped bytes: a repeated read of an entity skips the unwrap, which with
// Key Vault is a network call, and the key setup. The wrapped bytes are
// part of the lookup key, so a changed or rotated envelope misses and is
// unwrapped afresh. It is direct-mapped: a key's hash picks its one slot,
// and a newer key takes the slot over. Once warm it allocates nothing.
type keyCache struct {
	seed  maphash.Seed
	slots []cacheSlot
}

type cacheSlot struct {
	mu  sync.Mutex
	key []byte // the full lookup key, compared on every hit
	gcm cipher.AEAD
}

func newKeyCache(size int) *keyCache {
	if size <= 0 {
		return nil
	}
	return &keyCache{seed: maphash.MakeSeed(), slots: make([]cacheSlot, size)}
}

// cacheKey appends the lookup key of a wrapped content key to b.
func cacheKey[S string | []byte](b []byte, keyID, alg S, wrapped []byte) []byte {
	b = appendLP(b, keyID)
	b = appendLP(b, alg)
	return append(b, wrapped...)
}

func (c *keyCache) slot(k []byte) *cacheSlot {
	return &c.slots[maphash.Bytes(c.seed, k)%uint64(len(c.slots))]
}

func (c *keyCache) get(k []byte) cipher.AEAD {
	if c == nil {
		return nil
	}
	s := c.slot(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gcm != nil && bytes.Equal(s.key, k) {
		return s.gcm
	}
	return nil
}

func (c *keyCache) put(k []byte, g cipher.AEAD) {
	if c == nil {
		return
	}
	s := c.slot(k)
	s.mu.Lock()
	s.key, s.gcm = append(s.key[:0], k...), g
	s.mu.Unlock()
}
