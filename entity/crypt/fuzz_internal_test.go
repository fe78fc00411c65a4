package crypt

import (
	"bytes"
	"reflect"
	"sync/atomic"
	"testing"
)

// FuzzMetadata parses arbitrary metadata values: never a panic, and what
// parses is exactly what writing its fields back produces.
func FuzzMetadata(f *testing.F) {
	f.Add(append(appendList(appendList(appendList(appendEnvelope(nil, "kek-1", "A256KW", make([]byte, 40)), []string{"A", "B"}), []string{"S"}), []string{"A"}), make([]byte, 28)...))
	seed := append(appendList(appendList(appendList(appendEnvelope(nil, "kek-1", "A256KW", make([]byte, 40)), []string{"A", "B"}), []string{"S"}), []string{"A"}), make([]byte, 28)...)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMetadata(b, nil)
		// Lists remembered from a valid value are taken as they are only
		// when identical: the result is always parseMetadata's.
		var last atomic.Pointer[parsedLists]
		if _, err := parseMetadataWith(seed, nil, &last); err != nil || last.Load() == nil {
			t.Fatalf("seed: %v", err)
		}
		mc, errc := parseMetadataWith(b, nil, &last)
		if (err == nil) != (errc == nil) || !reflect.DeepEqual(m, mc) {
			t.Fatalf("with remembered lists: %+v, %v; without: %+v, %v", mc, errc, m, err)
		}
		if err != nil {
			return
		}
		out := appendEnvelope(nil, string(m.keyID), string(m.wrapAlg), m.wrapped)
		out = append(out, m.lists...)
		out = append(out, m.nonce...)
		out = append(out, m.tag...)
		if !bytes.Equal(out, b) {
			t.Fatalf("parsed %x, wrote back %x", b, out)
		}
		if len(m.names) != m.nEnc+m.nSign+len(m.beacons()) {
			t.Fatal("name counts do not add up")
		}
		if _, err := replaceEnvelope(b, "other", "A128KW", []byte{1}); err != nil {
			t.Fatalf("replaceEnvelope of parsed metadata: %v", err)
		}
	})
}

// FuzzLegacyMetadata parses arbitrary legacy metadata documents and name
// lists: never a panic.
func FuzzLegacyMetadata(f *testing.F) {
	f.Add([]byte(`{"WrappedContentKey":{"KeyId":"k","EncryptedKey":"AAAA","Algorithm":"A256KW"},"EncryptionAgent":{"Protocol":"1.0","EncryptionAlgorithm":"AES_CBC_256"},"ContentEncryptionIV":"oKGio6SlpqeoqaqrrK2urw=="}`), []byte(`["A","B"]`), []byte("0123456789abcdef0123456789abcdef"))
	f.Fuzz(func(t *testing.T, doc, names, ct []byte) {
		m, java, err := parseLegacyMetadata(doc)
		if err == nil && (len(m.ContentEncryptionIV) != 16 || m.WrappedContentKey.KeyId == "") {
			t.Fatal("accepted metadata without an IV or key id")
		}
		_, _ = parseLegacyNames(names, java)
		b, _ := newGCMBlock()
		if pt, ok := cbcDecrypt(b, make([]byte, 16), ct); ok && len(pt) >= len(ct) {
			t.Fatal("padding removed nothing")
		}
	})
}
