package indexset

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestShorten: a value of up to 64 bytes is kept whole; a longer one is
// cut to at most 61 bytes at a rune boundary, then "...", so that a
// multi-byte character is never split.
func TestShorten(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{strings.Repeat("a", 65), strings.Repeat("a", 61) + "..."},
		// "é" is two bytes: byte 61 would fall inside the 31st.
		{strings.Repeat("é", 40), strings.Repeat("é", 30) + "..."},
		// "€" is three bytes: 20 of them end at byte 60.
		{"x" + strings.Repeat("€", 30), "x" + strings.Repeat("€", 20) + "..."},
	} {
		if got := Shorten(tc.in); got != tc.want {
			t.Errorf("Shorten(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzShorten(f *testing.F) {
	f.Add(strings.Repeat("é", 40))
	f.Add("x" + strings.Repeat("€", 30))
	f.Add(strings.Repeat("😀", 20))
	f.Add("short")
	f.Fuzz(func(t *testing.T, s string) {
		got := Shorten(s)
		if len(s) <= 64 {
			if got != s {
				t.Fatalf("Shorten(%q) = %q, want it whole", s, got)
			}
			return
		}
		cut, ok := strings.CutSuffix(got, "...")
		if !ok || len(cut) > 61 || !strings.HasPrefix(s, cut) {
			t.Fatalf("Shorten(%q) = %q", s, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Shorten(%q) = %q splits a UTF-8 sequence", s, got)
		}
	})
}
