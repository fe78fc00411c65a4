package crypt

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// Content keys shared by several writes (Config.ContentKeyWrites).
//
// A shared content key is drawn, set up and wrapped once, then encrypts up
// to ContentKeyWrites entity writes of one Table for at most
// ContentKeyAge. Nothing in the stored format changes: each entity stores
// the same envelope (key id, algorithm, wrapped key), and a reader that
// has unwrapped it for one entity finds it in its KeyCache for the others.
// Each write still draws its own random first nonce, and the authenticated
// data of every value and signature names the table and the entity, so
// nonces never repeat under a key and nothing moves between the entities
// that share one.

const (
	// MaxContentKeyWrites is the most writes Config.ContentKeyWrites lets
	// one content key encrypt: with 96-bit random first nonces and at most
	// 256 values per write, two writes' nonces overlap with probability
	// below 2⁻⁴⁸ at this bound.
	MaxContentKeyWrites = 1 << 20
	// DefaultContentKeyAge is Config.ContentKeyAge's default.
	DefaultContentKeyAge = 10 * time.Minute
)

// sharedKey is a content key that serves several writes.
type sharedKey struct {
	gcm      cipher.AEAD
	envelope []byte // the metadata up to and with the key envelope
	cacheKey []byte // its KeyCache lookup key
	// expired is set by timer at ContentKeyAge: a write checks a flag, not
	// the clock. The timer is stopped when the next key takes over, so a
	// Table holds at most one key beyond the one in use.
	expired atomic.Bool
	timer   *time.Timer
	writes  atomic.Int64 // writes that took it, counting past the limit
}

// sharing is a core's shared content key and the means to draw the next.
type sharing struct {
	writes  int64
	age     time.Duration
	current atomic.Pointer[sharedKey]
	// drawing admits one draw at a time (a Key Vault wrap is a network
	// call): the writers that find the key spent wait for it, or for
	// their context.
	drawing chan struct{}
}

func newSharing(writes int, age time.Duration) *sharing {
	if writes <= 1 {
		return nil
	}
	if age == 0 {
		age = DefaultContentKeyAge
	}
	return &sharing{writes: int64(writes), age: age, drawing: make(chan struct{}, 1)}
}

// take returns the shared content key with one write reserved on it,
// drawing a new one when the current one is spent or too old.
func (c *core) take(ctx context.Context) (*sharedKey, error) {
	s := c.sharing
	for {
		k := s.current.Load()
		if k != nil && !k.expired.Load() && k.writes.Add(1) <= s.writes {
			return k, nil
		}
		select {
		case s.drawing <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if s.current.Load() != k { // another writer drew meanwhile
			<-s.drawing
			continue
		}
		next, err := c.draw(ctx)
		if err == nil {
			next.writes.Store(1)
			s.current.Store(next)
			if k != nil {
				k.timer.Stop()
			}
		}
		<-s.drawing
		return next, err
	}
}

// draw makes a new shared content key: random, set up, wrapped, and put
// in the KeyCache, so that reads of the entities it encrypts skip the
// unwrap.
func (c *core) draw(ctx context.Context) (*sharedKey, error) {
	var cek [keySize]byte
	defer clear(cek[:])
	var err error
	if c.random != nil {
		_, err = io.ReadFull(c.random, cek[:])
	} else {
		_, err = rand.Read(cek[:])
	}
	if err != nil {
		return nil, err
	}
	g, err := newGCM(cek[:])
	if err != nil {
		return nil, err
	}
	keyID, alg, wrapped, err := c.key.Wrap(ctx, cek[:])
	if err != nil {
		return nil, fmt.Errorf("crypt: wrapping the content key: %w", err)
	}
	k := &sharedKey{
		gcm:      g,
		envelope: appendEnvelope(nil, keyID, alg, wrapped),
		cacheKey: cacheKey(nil, keyID, alg, wrapped),
	}
	k.timer = time.AfterFunc(c.sharing.age, func() { k.expired.Store(true) })
	c.cache.put(k.cacheKey, g)
	return k, nil
}
