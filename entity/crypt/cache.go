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
// unwrapped afresh. It holds at most len(ring) keys and forgets the oldest
// first; once warm it allocates nothing.
type keyCache struct {
	mu   sync.Mutex
	seed maphash.Seed
	idx  map[uint64]int // hash of a lookup key → its slot in ring
	ring []cacheSlot
	next int
}

type cacheSlot struct {
	hash uint64
	key  []byte // the full lookup key, compared on every hit
	gcm  cipher.AEAD
}

func newKeyCache(size int) *keyCache {
	if size <= 0 {
		return nil
	}
	return &keyCache{seed: maphash.MakeSeed(), idx: make(map[uint64]int, size), ring: make([]cacheSlot, size)}
}

// cacheKey appends the lookup key of a wrapped content key to b.
func cacheKey[S string | []byte](b []byte, keyID, alg S, wrapped []byte) []byte {
	b = appendLP(b, keyID)
	b = appendLP(b, alg)
	return append(b, wrapped...)
}

func (c *keyCache) get(k []byte) cipher.AEAD {
	if c == nil {
		return nil
	}
	h := maphash.Bytes(c.seed, k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.idx[h]; ok && bytes.Equal(c.ring[i].key, k) {
		return c.ring[i].gcm
	}
	return nil
}

func (c *keyCache) put(k []byte, g cipher.AEAD) {
	if c == nil {
		return
	}
	h := maphash.Bytes(c.seed, k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.idx[h]; ok {
		return // the same key, or a hash collision: keep the first
	}
	s := &c.ring[c.next]
	if s.gcm != nil && c.idx[s.hash] == c.next {
		delete(c.idx, s.hash)
	}
	s.hash, s.key, s.gcm = h, append(s.key[:0], k...), g
	c.idx[h] = c.next
	c.next = (c.next + 1) % len(c.ring)
}
