package jsonscan

import (
	"bytes"
	"testing"
)

// TestScannerStrEveryPosition puts each byte that ends or interrupts a
// string's fast path (a quote, a backslash, a control character) at every
// position of strings of every length up to 40, around the eight-byte
// steps, and checks the scanner against the byte-by-byte rule.
func TestScannerStrEveryPosition(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for pos := 0; pos < n; pos++ {
			for _, special := range []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x7f, 0x80, 0xff} {
				body := bytes.Repeat([]byte{'a'}, n)
				body[pos] = special
				data := append(append([]byte{'"'}, body...), '"', ' ')
				s := New(data)
				got, esc, err := s.Str()
				// The rule: the string ends at the first unescaped quote; a
				// backslash escapes the next byte; a byte below 0x20, or no
				// closing quote, is an error.
				var want []byte
				var wantEsc bool
				wantErr := true // unterminated, unless a quote ends it
				for i := 1; i < len(data); i++ {
					c := data[i]
					if c == '"' {
						want, wantErr = data[1:i], false
						break
					}
					if c == '\\' {
						wantEsc = true
						i++
						continue
					}
					if c < 0x20 {
						break
					}
				}
				if wantErr != (err != nil) || (!wantErr && (!bytes.Equal(got, want) || esc != wantEsc)) {
					t.Fatalf("length %d, %#x at %d: got %q esc=%v err=%v; want %q esc=%v err=%v", n, special, pos, got, esc, err, want, wantEsc, wantErr)
				}
			}
		}
	}
}
