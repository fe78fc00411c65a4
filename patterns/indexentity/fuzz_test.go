package indexentity

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// FuzzMembers reads any text as a list of members: what decodes is keys,
// and writes back to the same text.
func FuzzMembers(f *testing.F) {
	f.Add("000123\n000152\n")
	f.Add("\n")
	f.Add("a b\nJones!\n")
	f.Add("x")
	f.Add("a/b\n")
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := decodeMembers(s)
		if err != nil {
			return
		}
		var b []byte
		for _, m := range ms {
			if keys.Validate(m) != nil {
				t.Fatalf("member %q is not a key", m)
			}
			b = appendMember(b, m)
		}
		if string(b) != s {
			t.Fatalf("%q read as %q, written back as %q", s, ms, b)
		}
		// The blob form holds the same list.
		got, err := decodeBlob(encodeBlob(ms))
		if err != nil || !slices.Equal(got, ms) {
			t.Fatalf("blob round trip of %q: %q, %v", ms, got, err)
		}
	})
}

// FuzzBlob reads any bytes as an index blob.
func FuzzBlob(f *testing.F) {
	f.Add([]byte(blobHeader + "000123\n000152\n"))
	f.Add([]byte(blobHeader))
	f.Add([]byte("garbage"))
	f.Add([]byte(blobHeader + "no newline"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := decodeBlob(data)
		if err != nil {
			return
		}
		if !bytes.Equal(encodeBlob(ms), data) {
			t.Fatalf("%q read as %q, written back differently", data, ms)
		}
	})
}

// FuzzDirectory reads any text as a directory of continuation entities:
// what decodes starts at "", is in key order, names each number once, and
// writes back to the same text; chunkFor finds, for any key, the entry
// whose range holds it.
func FuzzDirectory(f *testing.F) {
	f.Add("1\t\n2\tm\n", "n")
	f.Add("7\t\n", "")
	f.Add("1\ta\n", "a")
	f.Add("1\t\n1\tb\n", "b")
	f.Add("01\t\n", "x")
	f.Add("1\t\n3\tb\n2\ta\n", "ab")
	f.Fuzz(func(t *testing.T, s, key string) {
		dir, err := decodeDirectory(s)
		if err != nil {
			return
		}
		if got := strings.Join(encodeDirectory(dir), ""); got != s {
			t.Fatalf("%q read as %v, written back as %q", s, dir, got)
		}
		if dir[0].from != "" {
			t.Fatalf("the first entry starts at %q", dir[0].from)
		}
		i := chunkFor(dir, key)
		if keys.Compare(dir[i].from, key) > 0 || i+1 < len(dir) && keys.Compare(key, dir[i+1].from) >= 0 {
			t.Fatalf("chunkFor(%v, %q) = %d", dir, key, i)
		}
	})
}

// FuzzRow reads any properties as an index entity without panicking, and
// a list packed over properties reads back.
func FuzzRow(f *testing.F) {
	f.Add("000123\n", "", "", int64(0))
	f.Add("", "1\t\n2\tm\n", "", int64(3))
	f.Add("a\n", "1\t\n", "b\n", int64(2))
	f.Fuzz(func(t *testing.T, members, chunks, members2 string, next int64) {
		props := map[string]any{}
		if members != "" {
			props[PropMembers] = members
		}
		if chunks != "" {
			props[PropChunks] = chunks
		}
		if members2 != "" {
			props[PropMembers+"2"] = members2
		}
		if next != 0 {
			props[PropNextChunk] = next
		}
		e := &entity.DynamicEntity{PartitionKey: "p", RowKey: "r", Properties: props}
		ms, dir, _, err := decodeRow(e, true)
		if err != nil {
			return
		}
		if dir != nil && ms != nil {
			t.Fatal("both members and a directory")
		}
		packed := withMembers(&entity.DynamicEntity{Properties: map[string]any{}}, ms)
		got, _, _, err := decodeRow(packed, false)
		if err != nil || !slices.Equal(got, ms) {
			t.Fatalf("members %q packed and read back: %q, %v", ms, got, err)
		}
	})
}

// FuzzToken reads any text as a resume token: what parses prints back to
// a token that parses the same.
func FuzzToken(f *testing.F) {
	f.Add(token{}.String())
	f.Add(token{PK: "Sales", After: true}.String())
	f.Add(token{Phase: 1, Index: 2, PK: "Gone"}.String())
	f.Add("si1.e30")
	f.Add("ie1.eyJoIjoyfQ")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := parseToken(s)
		if err != nil {
			return
		}
		again, err := parseToken(tok.String())
		if err != nil || again != tok {
			t.Fatalf("%q parsed as %+v, printed as %q, parsed again as %+v (%v)", s, tok, tok.String(), again, err)
		}
	})
}

// FuzzKeys builds the keys and blob name of any value and reads them
// back; any string is parsed without panicking.
func FuzzKeys(f *testing.F) {
	f.Add("Sales", "Jones", int64(1), "lastname_Jones 2")
	f.Add("", "", int64(7), "lastname_")
	f.Add("a b", "x!y", int64(1<<40), "lastname/a! b x!!y.keys")
	f.Fuzz(func(t *testing.T, pk, value string, id int64, any string) {
		ix := &index[struct{}]{Index: Index[struct{}]{Name: "lastname"}, prefix: "lastname_"}
		ix.parseRK(any)
		ix.parseBlobName(any)
		if id < 1 {
			return
		}
		if v, n, ok := ix.parseRK(ix.headRK(value)); !ok || v != value || n != 0 {
			t.Fatalf("head of %q read as %q, %d, %v", value, v, n, ok)
		}
		if v, n, ok := ix.parseRK(ix.chunkRK(value, id)); !ok || v != value || n != id {
			t.Fatalf("chunk %d of %q read as %q, %d, %v", id, value, v, n, ok)
		}
		if p, v, ok := ix.parseBlobName(ix.blobName(pk, value)); !ok || p != pk || v != value {
			t.Fatalf("blob of %q/%q read as %q/%q, %v", pk, value, p, v, ok)
		}
		from, to := ix.valueRange(value)
		for _, rk := range []string{ix.headRK(value), ix.chunkRK(value, id)} {
			if keys.Compare(rk, from) < 0 || to != "" && keys.Compare(rk, to) >= 0 {
				t.Fatalf("%q is outside the range [%q, %q) of %q", rk, from, to, value)
			}
		}
	})
}
