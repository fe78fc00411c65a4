package crypt_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
)

// fuzzKey is the key the committed seeds were written under
// (testdata/fuzz/gen.go).
func fuzzTable(t testing.TB) *crypt.Table[person] {
	return newOffline[person](t, crypt.Config{Key: newLocalKey(t, "kek-1", 1), Legacy: true})
}

// FuzzDecrypt reads arbitrary bodies: never a panic, and an accepted body
// reads back the same after a round trip through Marshal.
func FuzzDecrypt(f *testing.F) {
	ct := fuzzTable(f)
	e := personValue("000123")
	seed, err := ct.Marshal(f.Context(), &e)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, body []byte) {
		var p person
		err := ct.Unmarshal(t.Context(), body, &p)
		if err != nil {
			if !errors.Is(err, entity.ErrDecode) && !errors.Is(err, entity.ErrInvalid) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		again, err := ct.Marshal(t.Context(), &p)
		if err != nil {
			t.Fatalf("accepted %q, cannot write it back: %v", body, err)
		}
		var q person
		if err := ct.Unmarshal(t.Context(), again, &q); err != nil || q != p {
			t.Fatalf("round trip of an accepted body: %+v %v", q, err)
		}
	})
}

// FuzzTamper puts arbitrary bytes in place of an entity's metadata and one
// ciphertext: the entity is accepted only when both are unchanged.
func FuzzTamper(f *testing.F) {
	ct := fuzzTable(f)
	e := personValue("000123")
	raw, err := ct.Marshal(f.Context(), &e)
	if err != nil {
		f.Fatal(err)
	}
	orig := parseBody(f, raw)
	meta, first := orig.binary(f, crypt.MetadataProperty), orig.binary(f, "First")
	f.Add(meta, first)
	f.Fuzz(func(t *testing.T, m, c []byte) {
		b := orig.clone()
		b.setBinary(crypt.MetadataProperty, m)
		b.setBinary("First", c)
		var p person
		err := ct.Unmarshal(t.Context(), b.bytes(t), &p)
		unchanged := bytes.Equal(m, meta) && bytes.Equal(c, first)
		switch {
		case err == nil && !unchanged:
			t.Fatalf("a changed entity was accepted: %+v", p)
		case err != nil && unchanged:
			t.Fatalf("the unchanged entity was refused: %v", err)
		case err != nil && !errors.Is(err, entity.ErrDecode):
			t.Fatalf("untyped error %v", err)
		}
	})
}
