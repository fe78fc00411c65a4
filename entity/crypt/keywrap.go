package crypt

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

// AES key wrap, RFC 3394 (KW), and with padding, RFC 5649 (KWP): the
// deterministic authenticated encryption of key material under a
// key-encryption key, written here with crypto/aes (the standard library has
// no key wrap).

var (
	kwIV  = [8]byte{0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6} // RFC 3394 §2.2.3.1
	kwpIV = [4]byte{0xA6, 0x59, 0x59, 0xA6}                         // RFC 5649 §3
)

var errKeyWrapInput = errors.New("key wrap: input length not supported")

// kwWrap wraps plaintext, a multiple of 8 bytes and at least 16, with the
// initial value iv (RFC 3394 §2.2.1, the index-based form).
func kwWrap(b cipher.Block, iv [8]byte, plaintext []byte) []byte {
	n := len(plaintext) / 8
	// One allocation: the result, then a block of scratch space (a local
	// array passed to the cipher.Block would escape to the heap too).
	out := make([]byte, 8+len(plaintext)+16)
	buf := out[8+len(plaintext):]
	out = out[:8+len(plaintext)]
	copy(out[8:], plaintext)
	copy(buf[:8], iv[:])
	// 8-byte moves as words: inline loads and stores, not memmove calls.
	le := binary.LittleEndian
	for j := 0; j < 6; j++ {
		for i := 1; i <= n; i++ {
			r := out[8*i : 8*i+8]
			le.PutUint64(buf[8:], le.Uint64(r))
			b.Encrypt(buf, buf)
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(buf[:8], binary.BigEndian.Uint64(buf[:8])^t)
			le.PutUint64(r, le.Uint64(buf[8:]))
		}
	}
	copy(out[:8], buf[:8])
	clear(buf[8:]) // key material
	return out
}

// kwUnwrap reverses kwWrap and returns the recovered initial value, which
// the caller checks, and the plaintext.
func kwUnwrap(b cipher.Block, ciphertext []byte) ([8]byte, []byte) {
	n := len(ciphertext)/8 - 1
	out := make([]byte, 8*n+16) // the result, then scratch space (see kwWrap)
	buf := out[8*n:]
	out = out[:8*n]
	copy(out, ciphertext[8:])
	copy(buf[:8], ciphertext[:8])
	for j := 5; j >= 0; j-- {
		for i := n; i >= 1; i-- {
			r := out[8*(i-1) : 8*i]
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(buf[:8], binary.BigEndian.Uint64(buf[:8])^t)
			copy(buf[8:], r)
			b.Decrypt(buf, buf)
			copy(r, buf[8:])
		}
	}
	var a [8]byte
	copy(a[:], buf[:8])
	clear(buf[8:]) // key material
	return a, out
}

// wrapKW wraps key material (a multiple of 8 bytes, at least 16) under
// the AES key b by RFC 3394.
func wrapKW(b cipher.Block, key []byte) ([]byte, error) {
	if len(key) < 16 || len(key)%8 != 0 {
		return nil, errKeyWrapInput
	}
	return kwWrap(b, kwIV, key), nil
}

// unwrapKW reverses wrapKW; ErrUnwrap when the integrity check fails.
func unwrapKW(b cipher.Block, wrapped []byte) ([]byte, error) {
	if len(wrapped) < 24 || len(wrapped)%8 != 0 {
		return nil, ErrUnwrap
	}
	a, p := kwUnwrap(b, wrapped)
	if subtle.ConstantTimeCompare(a[:], kwIV[:]) != 1 {
		return nil, ErrUnwrap
	}
	return p, nil
}

// wrapKWP wraps key material of any length from 1 byte under the AES key
// b by RFC 5649 (key wrap with padding).
func wrapKWP(b cipher.Block, key []byte) ([]byte, error) {
	if len(key) == 0 || uint64(len(key)) > 1<<32-1 {
		return nil, errKeyWrapInput
	}
	var aiv [8]byte
	copy(aiv[:4], kwpIV[:])
	binary.BigEndian.PutUint32(aiv[4:], uint32(len(key)))
	padded := make([]byte, (len(key)+7)/8*8)
	copy(padded, key)
	if len(padded) == 8 { // §4.1: one block, encrypted as AIV | P
		out := make([]byte, 16)
		copy(out, aiv[:])
		copy(out[8:], padded)
		b.Encrypt(out, out)
		return out, nil
	}
	return kwWrap(b, aiv, padded), nil
}

// unwrapKWP reverses wrapKWP; ErrUnwrap when the integrity check, the
// length or the padding is wrong.
func unwrapKWP(b cipher.Block, wrapped []byte) ([]byte, error) {
	if len(wrapped) < 16 || len(wrapped)%8 != 0 {
		return nil, ErrUnwrap
	}
	var a [8]byte
	var p []byte
	if len(wrapped) == 16 {
		var buf [16]byte
		b.Decrypt(buf[:], wrapped)
		copy(a[:], buf[:8])
		p = append([]byte(nil), buf[8:]...)
	} else {
		a, p = kwUnwrap(b, wrapped)
	}
	// §3: the AIV's constant, a length in (8(n-1), 8n], and zero padding,
	// all checked without early exits on secret-dependent data.
	mli := int(binary.BigEndian.Uint32(a[4:]))
	ok := subtle.ConstantTimeCompare(a[:4], kwpIV[:])
	lenOK := 0
	if mli > len(p)-8 && mli <= len(p) {
		lenOK = 1
	}
	padOK := 1
	if lenOK == 1 {
		var or byte
		for _, c := range p[mli:] {
			or |= c
		}
		padOK = subtle.ConstantTimeByteEq(or, 0)
	}
	if ok&lenOK&padOK != 1 {
		return nil, ErrUnwrap
	}
	return p[:mli], nil
}
