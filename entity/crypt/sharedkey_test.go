package crypt_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
)

// countingKey counts the wraps and unwraps of a key-encryption key; wrap,
// when set, runs before each wrap and can fail it or hold it.
type countingKey struct {
	crypt.KeyWrapper
	wraps, unwraps atomic.Int64
	wrap           func(ctx context.Context) error
}

func (k *countingKey) Wrap(ctx context.Context, cek []byte) (string, string, []byte, error) {
	if k.wrap != nil {
		if err := k.wrap(ctx); err != nil {
			return "", "", nil, err
		}
	}
	k.wraps.Add(1)
	return k.KeyWrapper.Wrap(ctx, cek)
}

func (k *countingKey) Unwrap(ctx context.Context, keyID, alg string, wrapped []byte) ([]byte, error) {
	k.unwraps.Add(1)
	return k.KeyWrapper.Unwrap(ctx, keyID, alg, wrapped)
}

// envelope returns the key envelope of a stored _tkEnc (format version,
// AEAD, then the length-prefixed key id, algorithm and wrapped key: see
// the package doc's Wire format).
func envelope(t testing.TB, meta []byte) string {
	t.Helper()
	at := 2
	for range 3 {
		n, k := binary.Uvarint(meta[at:])
		if k <= 0 || at+k+int(n) > len(meta) {
			t.Fatalf("malformed _tkEnc %x", meta)
		}
		at += k + int(n)
	}
	return string(meta[:at])
}

// nonces returns every nonce of a stored entity: each ciphertext's (after
// its version byte) and the signature's (before the tag that ends _tkEnc).
func nonces(t testing.TB, m body, encrypted ...string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, name := range encrypted {
		out = append(out, m.binary(t, name)[1:13])
	}
	meta := m.binary(t, "_tkEnc")
	return append(out, meta[len(meta)-28:len(meta)-16])
}

// TestContentKeyWrites checks Config.ContentKeyWrites on Azurite, read
// raw: 7 writes with n = 3 store 3 content keys (3, 3 and 1 entities),
// wrapped 3 times; no nonce repeats across the 7 entities; a fresh Table
// (empty KeyCache) reads all 7 with 3 unwraps; and the default wraps once
// per write.
func TestContentKeyWrites(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		writes, wantKeys int
	}{{0, 7}, {1, 7}, {3, 3}, {1000, 1}} {
		t.Run(fmt.Sprint(tc.writes), func(t *testing.T) {
			kek := &countingKey{KeyWrapper: newLocalKey(t, "kek-1", 1)}
			ct, raw := onAzurite[person](t, env, crypt.Config{Key: kek, ContentKeyWrites: tc.writes})
			for i := range 7 {
				p := personValue(fmt.Sprintf("r%d", i))
				if err := ct.Insert(ctx, &p); err != nil {
					t.Fatal(err)
				}
			}
			if got := kek.wraps.Load(); got != int64(tc.wantKeys) {
				t.Errorf("%d wraps for 7 writes, want %d", got, tc.wantKeys)
			}
			perKey := map[string]int{}
			seen := map[string]string{}
			for _, b := range rawBodies(t, raw) {
				m := parseBody(t, b)
				perKey[envelope(t, m.binary(t, "_tkEnc"))]++
				for _, n := range nonces(t, m, "First", "Last", "Email") {
					if other, dup := seen[string(n)]; dup {
						t.Fatalf("nonce %x used by %s and %s", n, other, m["RowKey"])
					}
					seen[string(n)] = m["RowKey"].(string)
				}
			}
			if len(perKey) != tc.wantKeys {
				t.Fatalf("%d content keys stored, want %d: %v", len(perKey), tc.wantKeys, perKey)
			}
			limit := max(tc.writes, 1)
			for _, n := range perKey {
				if n > limit {
					t.Fatalf("a content key encrypts %d entities, more than %d", n, limit)
				}
			}
			reader := &countingKey{KeyWrapper: newLocalKey(t, "kek-1", 1)}
			fresh, err := crypt.New(entityTable[person](t, raw), crypt.Config{Key: reader})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 7 {
				rk := fmt.Sprintf("r%d", i)
				got, err := fresh.Get(ctx, "Sales", rk)
				if want := personValue(rk); err != nil || got.Email != want.Email || got.First != want.First {
					t.Fatalf("read %s: %+v, %v", rk, got, err)
				}
			}
			if got := reader.unwraps.Load(); got != int64(tc.wantKeys) {
				t.Errorf("a fresh Table unwrapped %d times to read 7 entities, want %d", got, tc.wantKeys)
			}
		})
	}
}

// TestSharedKeyNothingMovesBetweenEntities copies, between two entities
// encrypted under one shared content key, a ciphertext and then the whole
// protected set: each read fails as tampered, since every ciphertext and
// the signature name their entity.
func TestSharedKeyNothingMovesBetweenEntities(t *testing.T) {
	ct := newOffline[person](t, crypt.Config{ContentKeyWrites: 100})
	pa, pb := personValue("a"), personValue("b")
	pb.Email = "other@contoso.com"
	a, err := ct.Marshal(t.Context(), &pa)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ct.Marshal(t.Context(), &pb)
	if err != nil {
		t.Fatal(err)
	}
	ma, mb := parseBody(t, a), parseBody(t, b)
	if envelope(t, ma.binary(t, "_tkEnc")) != envelope(t, mb.binary(t, "_tkEnc")) {
		t.Fatal("the two writes do not share a content key")
	}
	one := mb.clone()
	one.setBinary("Email", ma.binary(t, "Email"))
	wantKind(t, readErr(t, ct, one.bytes(t)), crypt.ErrTampered)
	all := ma.clone()
	all["RowKey"] = "b"
	wantKind(t, readErr(t, ct, all.bytes(t)), crypt.ErrTampered)
}

// TestSharedKeyConcurrentWriters writes from 8 goroutines through one
// Table with n = 16: no content key encrypts more than 16 entities, every
// stored key was wrapped once, and no nonce repeats.
func TestSharedKeyConcurrentWriters(t *testing.T) {
	kek := &countingKey{KeyWrapper: newLocalKey(t, "kek-1", 1)}
	ct := newOffline[person](t, crypt.Config{Key: kek, ContentKeyWrites: 16})
	const writers, each = 8, 100
	bodies := make([][]byte, writers*each)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				p := personValue(fmt.Sprintf("w%d-%d", w, i))
				b, err := ct.Marshal(t.Context(), &p)
				if err != nil {
					t.Error(err)
					return
				}
				bodies[w*each+i] = b
			}
		})
	}
	wg.Wait()
	perKey := map[string]int{}
	seen := map[string]bool{}
	for _, b := range bodies {
		m := parseBody(t, b)
		perKey[envelope(t, m.binary(t, "_tkEnc"))]++
		for _, n := range nonces(t, m, "First", "Last", "Email") {
			if seen[string(n)] {
				t.Fatalf("nonce %x repeats", n)
			}
			seen[string(n)] = true
		}
	}
	for _, n := range perKey {
		if n > 16 {
			t.Fatalf("a content key encrypts %d entities, more than 16", n)
		}
	}
	if len(perKey) < writers*each/16 || int64(len(perKey)) != kek.wraps.Load() {
		t.Fatalf("%d content keys, %d wraps, for %d writes", len(perKey), kek.wraps.Load(), writers*each)
	}
}

// TestContentKeyAge: a shared content key keeps encrypting while it is
// younger than ContentKeyAge, and stops once that has passed, however few
// writes it served.
func TestContentKeyAge(t *testing.T) {
	envelopeOf := func(ct *crypt.Table[person]) string {
		p := personValue("a")
		b, err := ct.Marshal(t.Context(), &p)
		if err != nil {
			t.Fatal(err)
		}
		return envelope(t, parseBody(t, b).binary(t, "_tkEnc"))
	}
	young := newOffline[person](t, crypt.Config{ContentKeyWrites: 1000, ContentKeyAge: time.Hour})
	if first := envelopeOf(young); envelopeOf(young) != first {
		t.Fatal("a second write within ContentKeyAge drew a new content key")
	}
	kek := &countingKey{KeyWrapper: newLocalKey(t, "kek-1", 1)}
	old := newOffline[person](t, crypt.Config{Key: kek, ContentKeyWrites: 1000, ContentKeyAge: 10 * time.Millisecond})
	first := envelopeOf(old)
	time.Sleep(200 * time.Millisecond) // twenty times the age
	if envelopeOf(old) == first || kek.wraps.Load() != 2 {
		t.Fatalf("after ContentKeyAge the old content key still encrypts (%d wraps)", kek.wraps.Load())
	}
}

// TestSharedKeyWrapFailure: a wrap that fails fails the write that drew
// the key, before any request, and leaves nothing behind: the next write
// draws again.
func TestSharedKeyWrapFailure(t *testing.T) {
	ctx := t.Context()
	vault := errors.New("vault unavailable")
	var failing atomic.Bool
	failing.Store(true)
	kek := &countingKey{KeyWrapper: newLocalKey(t, "kek-1", 1), wrap: func(context.Context) error {
		if failing.Load() {
			return vault
		}
		return nil
	}}
	ct, raw := onAzurite[person](t, env, crypt.Config{Key: kek, ContentKeyWrites: 10})
	p := personValue("a")
	if err := ct.Insert(ctx, &p); !errors.Is(err, vault) {
		t.Fatalf("insert with a failing wrap: %v", err)
	}
	if n := len(rawBodies(t, raw)); n != 0 {
		t.Fatalf("%d entities stored after a failed wrap", n)
	}
	failing.Store(false)
	if err := ct.Insert(ctx, &p); err != nil {
		t.Fatalf("insert once the vault is back: %v", err)
	}
	if got, err := ct.Get(ctx, "Sales", "a"); err != nil || got.Email != p.Email {
		t.Fatalf("read back: %+v, %v", got, err)
	}
}

// TestSharedKeyDrawHonoursContext: while one write draws the next shared
// content key (its wrap held, as a slow vault would), another write whose
// context ends returns the context's error instead of waiting.
func TestSharedKeyDrawHonoursContext(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	kek := &countingKey{KeyWrapper: newLocalKey(t, "kek-1", 1), wrap: func(context.Context) error {
		entered <- struct{}{}
		<-release
		return nil
	}}
	ct := newOffline[person](t, crypt.Config{Key: kek, ContentKeyWrites: 2})
	p := personValue("a")
	drawn := make(chan error, 1)
	go func() {
		_, err := ct.Marshal(t.Context(), &p)
		drawn <- err
	}()
	<-entered
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := ct.Marshal(short, &p); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a write waiting for a held draw: %v", err)
	}
	close(release)
	if err := <-drawn; err != nil {
		t.Fatalf("the held draw: %v", err)
	}
	if kek.wraps.Load() != 1 {
		t.Fatalf("%d wraps, want 1", kek.wraps.Load())
	}
}

// TestContentKeyConfig: bad sharing settings are a *ConfigError before
// any request.
func TestContentKeyConfig(t *testing.T) {
	for _, cfg := range []crypt.Config{
		{ContentKeyWrites: -1},
		{ContentKeyWrites: crypt.MaxContentKeyWrites + 1},
		{ContentKeyWrites: 10, ContentKeyAge: -time.Second},
		{ContentKeyWrites: 10, KeyCache: -1},
	} {
		cfg.Key = newLocalKey(t, "kek-1", 1)
		cfg.Table = "employees"
		_, err := crypt.New(offlineTable[person](t), cfg)
		var ce *crypt.ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, crypt.ErrInvalidConfig) {
			t.Fatalf("%+v: %v", cfg, err)
		}
	}
}

// TestRotateSharedContentKeys rotates 25 entities written under 3 shared
// content keys (ContentKeyWrites 10): the old key unwraps 3 times and the
// new one wraps 3 times (plus the probe that learns its id), every entity
// ends readable under the new key alone, and entities that shared a key
// still share one (read raw). Another writer (through the Table that
// wrote them, so under the same shared key) changes one entity just before
// the rotation's merge of it: the merge is refused by its ETag, and the
// entity is rewrapped from a fresh read with the rewrap already made, the
// other writer's value kept.
func TestRotateSharedContentKeys(t *testing.T) {
	ctx := t.Context()
	oldKey := &countingKey{KeyWrapper: newLocalKey(t, "kek-old", 1)}
	newKey := &countingKey{KeyWrapper: newLocalKey(t, "kek-new", 2)}
	ct, raw := onAzurite[person](t, env, crypt.Config{Key: oldKey, ContentKeyWrites: 10})
	for i := range 25 {
		p := personValue(fmt.Sprintf("r%02d", i))
		if err := ct.Insert(ctx, &p); err != nil {
			t.Fatal(err)
		}
	}
	oldKey.unwraps.Store(0)
	other := &beforeFirst{match: func(r *http.Request) bool {
		return isMethod("MERGE", "PATCH")(r) && strings.Contains(r.URL.Path, "'r17'")
	}, do: func() {
		p := personValue("r17")
		p.Dept = "Marketing"
		if err := ct.Upsert(ctx, &p, entity.Replace); err != nil {
			t.Error(err)
		}
	}}
	hooked := env.With(other).TableService.NewClient(ct.Name())
	rotating := cryptOver[person](t, hooked, ct.Name(), crypt.Config{Key: crypt.Keyring(newKey, oldKey), KeyCache: -1})
	res, err := rotating.Rotate(ctx, crypt.RotateOptions{})
	if err != nil || res.Rewrapped != 25 || res.Scanned != 25 || other.seen.Load() != 2 {
		t.Fatalf("rotate: %+v, %v (%d merges of r17, want the refused one and one after a fresh read)", res, err, other.seen.Load())
	}
	if got := oldKey.unwraps.Load(); got != 3 {
		t.Errorf("the old key unwrapped %d times for 3 shared content keys", got)
	}
	if got := newKey.wraps.Load(); got != 4 {
		t.Errorf("the new key wrapped %d times, want 3 and the probe", got)
	}
	perKey := map[string]int{}
	for _, b := range rawBodies(t, raw) {
		m := parseBody(t, b)
		perKey[envelope(t, m.binary(t, "_tkEnc"))]++
	}
	if len(perKey) != 3 {
		t.Fatalf("%d envelopes after rotation, want 3: %v", len(perKey), perKey)
	}
	onlyNew := cryptOver[person](t, raw, ct.Name(), crypt.Config{Key: newLocalKey(t, "kek-new", 2)})
	for i := range 25 {
		rk := fmt.Sprintf("r%02d", i)
		want := personValue(rk)
		if rk == "r17" {
			want.Dept = "Marketing"
		}
		if got, err := onlyNew.Get(ctx, "Sales", rk); err != nil || got.Email != want.Email || got.Dept != want.Dept {
			t.Fatalf("%s under the new key alone: %+v, %v", rk, got, err)
		}
	}
}

// beforeFirst runs do before the first request that match accepts, and
// counts those requests.
type beforeFirst struct {
	match func(*http.Request) bool
	do    func()
	done  atomic.Bool
	seen  atomic.Int32
}

func (b *beforeFirst) Do(req *policy.Request) (*http.Response, error) {
	if b.match(req.Raw()) {
		b.seen.Add(1)
		if b.done.CompareAndSwap(false, true) {
			b.do()
		}
	}
	return req.Next()
}
