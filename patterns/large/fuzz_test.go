package large

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tablekit/tablekit/keys"
)

// A reference is read back from every entity: any string is refused or
// parsed into a Ref that encodes to a string parsing to the same Ref.
func FuzzRef(f *testing.F) {
	f.Add(Ref{Blob: "employees/Sales/000123/Photo/7b0c", Size: 5 << 20, SHA256: [32]byte{1, 2, 3}}.encode())
	f.Add(`{"blob":"x","size":1,"sha256":"` + strings.Repeat("0", 64) + `","later":true}`)
	f.Add(Ref{Blob: "employees/Sales/000123/Photo/7b0c", Size: 5 << 20, Checksum: ChecksumCRC32C, CRC32C: 0x1c291ca3}.encode())
	f.Add(`{"blob":"x","size":1,"crc32c":"0000000A","sha256":""}`)
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseRef(s)
		if err != nil {
			return
		}
		if r.IsZero() || r.Size <= 0 || r.Blob == "" || !utf8.ValidString(r.Blob) {
			t.Fatalf("parseRef(%q) accepted %+v", s, r)
		}
		back, err := parseRef(r.encode())
		if err != nil || back != r {
			t.Fatalf("parseRef(%q) = %+v encodes as %q, which parses to %+v, %v", s, r, r.encode(), back, err)
		}
	})
}

// Blob names are built from any key the service allows: a segment is
// never empty, never "." or "..", never ends in '.', uses only safe
// characters, is at most maxSegment long, and two different keys that fit
// give different segments.
func FuzzSegment(f *testing.F) {
	f.Add("Sales", "Sales.")
	f.Add("email_jonesj@contoso.com", "")
	f.Add(strings.Repeat("é", 300), strings.Repeat("é", 301))
	f.Fuzz(func(t *testing.T, a, b string) {
		if keys.Validate(a) != nil || keys.Validate(b) != nil {
			return
		}
		s := segment(a)
		if s == "" || s == "." || s == ".." || strings.HasSuffix(s, ".") || strings.HasPrefix(s, ".") || len(s) > maxSegment {
			t.Fatalf("segment(%q) = %q", a, s)
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~", c) >= 0) {
				t.Fatalf("segment(%q) = %q has %q", a, s, c)
			}
		}
		if a != b && segment(a) == segment(b) {
			t.Fatalf("segment(%q) = segment(%q) = %q", a, b, s)
		}
		if name := newBlobName(strings.Repeat("p", maxPrefix), a, b, strings.Repeat("P", 255)); utf8.RuneCountInString(name) > maxBlobName {
			t.Fatalf("a name of %d characters", utf8.RuneCountInString(name))
		}
	})
}

// Blob metadata is read back by Sweep from any blob under the prefix:
// what metadata writes reads back as written, and anything else is
// refused or read without a panic.
func FuzzMetadata(f *testing.F) {
	f.Add("Sales", "000123", "Photo", "U2FsZXM", "")
	f.Add("", "'", "P", "!!", "Tablekitpk")
	f.Fuzz(func(t *testing.T, pk, rk, prop, raw, key string) {
		if keys.Validate(pk) == nil && keys.Validate(rk) == nil && prop != "" && utf8.ValidString(prop) { // property names are UTF-8
			md := metadata(owner{pk, rk, prop}, Ref{Checksum: Checksum(len(pk) % 2)})
			o, ok := ownerOf(md)
			if !ok || o != (owner{pk, rk, prop}) {
				t.Fatalf("metadata of %q %q %q reads back as %+v, %v", pk, rk, prop, o, ok)
			}
			for _, v := range md {
				for i := 0; i < len(*v); i++ {
					if (*v)[i] < 0x20 || (*v)[i] > 0x7e {
						t.Fatalf("metadata value %q is not printable ASCII", *v)
					}
				}
			}
		}
		md := map[string]*string{key: &raw, metaPK: &raw, metaRK: &raw}
		if o, ok := ownerOf(md); ok {
			if b, err := base64.RawURLEncoding.DecodeString(raw); err != nil || o.pk != string(b) {
				t.Fatalf("ownerOf read %+v from %q", o, raw)
			}
		}
	})
}
