package crypt

import (
	"bytes"
	"crypto/aes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The test vectors of RFC 3394 §4 (KEK, key data, ciphertext).
var rfc3394Vectors = []struct{ name, kek, key, wrapped string }{
	{"4.1 128-bit data, 128-bit KEK", "000102030405060708090A0B0C0D0E0F", "00112233445566778899AABBCCDDEEFF",
		"1FA68B0A8112B447 AEF34BD8FB5A7B82 9D3E862371D2CFE5"},
	{"4.2 128-bit data, 192-bit KEK", "000102030405060708090A0B0C0D0E0F1011121314151617", "00112233445566778899AABBCCDDEEFF",
		"96778B25AE6CA435 F92B5B97C050AED2 468AB8A17AD84E5D"},
	{"4.3 128-bit data, 256-bit KEK", "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F", "00112233445566778899AABBCCDDEEFF",
		"64E8C3F9CE0F5BA2 63E9777905818A2A 93C8191E7D6E8AE7"},
	{"4.4 192-bit data, 192-bit KEK", "000102030405060708090A0B0C0D0E0F1011121314151617", "00112233445566778899AABBCCDDEEFF0001020304050607",
		"031D33264E15D332 68F24EC260743EDC E1C6C7DDEE725A93 6BA814915C6762D2"},
	{"4.5 192-bit data, 256-bit KEK", "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F", "00112233445566778899AABBCCDDEEFF0001020304050607",
		"A8F9BC1612C68B3F F6E6F4FBE30E71E4 769C8B80A32CB895 8CD5D17D6B254DA1"},
	{"4.6 256-bit data, 256-bit KEK", "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F", "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F",
		"28C9F404C4B810F4 CBCCB35CFB87F826 3F5786E2D80ED326 CBC7F0E71A99F43B FB988B9B7A02DD21"},
}

// The test vectors of RFC 5649 §6.
var rfc5649Vectors = []struct{ name, kek, key, wrapped string }{
	{"20 octets", "5840df6e29b02af1 ab493b705bf16ea1 ae8338f4dcc176a8", "c37b7e6492584340 bed1220780894115 5068f738",
		"138bdeaa9b8fa7fc 61f97742e72248ee 5ae6ae5360d1ae6a 5f54f373fa543b6a"},
	{"7 octets", "5840df6e29b02af1 ab493b705bf16ea1 ae8338f4dcc176a8", "466f7250617369", "afbeb0f07dfbf541 9200f2ccb50bb24f"},
}

func TestKeyWrapRFC3394Vectors(t *testing.T) {
	for _, v := range rfc3394Vectors {
		t.Run(v.name, func(t *testing.T) {
			b, err := aes.NewCipher(unhex(t, v.kek))
			if err != nil {
				t.Fatal(err)
			}
			got, err := wrapKW(b, unhex(t, v.key))
			if err != nil || !bytes.Equal(got, unhex(t, v.wrapped)) {
				t.Fatalf("wrap = %x, %v; want %s", got, err, v.wrapped)
			}
			back, err := unwrapKW(b, got)
			if err != nil || !bytes.Equal(back, unhex(t, v.key)) {
				t.Fatalf("unwrap = %x, %v", back, err)
			}
			// Every bit of the wrapped key is covered by the integrity check.
			for i := range got {
				bad := bytes.Clone(got)
				bad[i] ^= 0x01
				if _, err := unwrapKW(b, bad); !errors.Is(err, ErrUnwrap) {
					t.Fatalf("flipped byte %d: err = %v, want ErrUnwrap", i, err)
				}
			}
		})
	}
}

func TestKeyWrapRFC5649Vectors(t *testing.T) {
	for _, v := range rfc5649Vectors {
		t.Run(v.name, func(t *testing.T) {
			b, err := aes.NewCipher(unhex(t, v.kek))
			if err != nil {
				t.Fatal(err)
			}
			got, err := wrapKWP(b, unhex(t, v.key))
			if err != nil || !bytes.Equal(got, unhex(t, v.wrapped)) {
				t.Fatalf("wrap = %x, %v; want %s", got, err, v.wrapped)
			}
			back, err := unwrapKWP(b, got)
			if err != nil || !bytes.Equal(back, unhex(t, v.key)) {
				t.Fatalf("unwrap = %x, %v", back, err)
			}
			for i := range got {
				bad := bytes.Clone(got)
				bad[i] ^= 0x80
				if _, err := unwrapKWP(b, bad); !errors.Is(err, ErrUnwrap) {
					t.Fatalf("flipped byte %d: err = %v, want ErrUnwrap", i, err)
				}
			}
		})
	}
}

// TestKeyWrapPadLengths round-trips every length from 1 to 80 bytes, and
// checks that a wrap under another key, or cut short, does not unwrap.
func TestKeyWrapPadLengths(t *testing.T) {
	b, _ := aes.NewCipher(bytes.Repeat([]byte{7}, 32))
	other, _ := aes.NewCipher(bytes.Repeat([]byte{8}, 32))
	for n := 1; n <= 80; n++ {
		key := bytes.Repeat([]byte{byte(n)}, n)
		w, err := wrapKWP(b, key)
		if err != nil {
			t.Fatal(n, err)
		}
		if want := (n+7)/8*8 + 8; len(w) != want {
			t.Fatalf("length %d: wrapped to %d bytes, want %d", n, len(w), want)
		}
		got, err := unwrapKWP(b, w)
		if err != nil || !bytes.Equal(got, key) {
			t.Fatalf("length %d: %x, %v", n, got, err)
		}
		if _, err := unwrapKWP(other, w); !errors.Is(err, ErrUnwrap) {
			t.Fatalf("length %d under another key: %v", n, err)
		}
		if len(w) > 16 {
			if _, err := unwrapKWP(b, w[:len(w)-8]); !errors.Is(err, ErrUnwrap) {
				t.Fatalf("length %d cut short: %v", n, err)
			}
		}
	}
	if _, err := wrapKW(b, make([]byte, 20)); err == nil {
		t.Fatal("RFC 3394 wrapped 20 bytes")
	}
	if _, err := unwrapKW(b, make([]byte, 20)); !errors.Is(err, ErrUnwrap) {
		t.Fatalf("unwrap of 20 bytes: %v", err)
	}
}

func TestLocalKey(t *testing.T) {
	ctx := t.Context()
	k, err := NewLocalKey("kek-1", bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	cek := bytes.Repeat([]byte{9}, 32)
	id, alg, w, err := k.Wrap(ctx, cek)
	if err != nil || id != "kek-1" || alg != AlgA256KW || len(w) != 40 {
		t.Fatalf("wrap: %q %q %d %v", id, alg, len(w), err)
	}
	if got, err := k.Unwrap(ctx, id, alg, w); err != nil || !bytes.Equal(got, cek) {
		t.Fatalf("unwrap: %x %v", got, err)
	}
	if _, err := k.Unwrap(ctx, "kek-2", alg, w); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("other id: %v", err)
	}
	if _, err := k.Unwrap(ctx, id, "RSA-OAEP", w); !errors.Is(err, ErrUnwrap) {
		t.Fatalf("other algorithm: %v", err)
	}
	// An odd-length key goes through RFC 5649.
	id, alg, w, err = k.Wrap(ctx, []byte("seven!!"))
	if err != nil || alg != AlgAESKWPad {
		t.Fatalf("odd length: %q %v", alg, err)
	}
	if got, err := k.Unwrap(ctx, id, alg, w); err != nil || string(got) != "seven!!" {
		t.Fatalf("odd length unwrap: %q %v", got, err)
	}
	for _, bad := range []struct {
		id  string
		key []byte
	}{{"", make([]byte, 32)}, {"x", make([]byte, 31)}, {"x", nil}} {
		if _, err := NewLocalKey(bad.id, bad.key); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewLocalKey(%q, %d bytes): %v, want ErrInvalidConfig", bad.id, len(bad.key), err)
		}
	}
	// A keyring unwraps with any of its keys and wraps with the first.
	k2, _ := NewLocalKey("kek-2", bytes.Repeat([]byte{2}, 16))
	ring := Keyring(k2, k)
	id, _, w2, _ := ring.Wrap(ctx, cek)
	if id != "kek-2" {
		t.Fatalf("keyring wrapped with %q", id)
	}
	if got, err := ring.Unwrap(ctx, "kek-1", AlgA256KW, w); err == nil && len(got) == 32 {
		t.Fatal("unwrapped a 7-byte key's wrap as a 32-byte key")
	}
	_, _, w1, _ := k.Wrap(ctx, cek)
	for _, c := range []struct {
		id, alg string
		w       []byte
	}{{"kek-1", AlgA256KW, w1}, {"kek-2", AlgA128KW, w2}} {
		if got, err := ring.Unwrap(ctx, c.id, c.alg, c.w); err != nil || !bytes.Equal(got, cek) {
			t.Fatalf("keyring unwrap %s: %v", c.id, err)
		}
	}
	if _, err := ring.Unwrap(ctx, "kek-3", AlgA256KW, w1); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("keyring, unknown id: %v", err)
	}
}
