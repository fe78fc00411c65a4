package backup

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

// FuzzParseToken: an export's resume token is either refused with a
// *ConfigError matching ErrInvalid and entity.ErrInvalid, or it is exactly
// the token its position writes — one spelling per position, so a token
// with CR or LF (which base64 skips) or JSON spelled otherwise is refused
// (testdata/fuzz/FuzzParseToken).
func FuzzParseToken(f *testing.F) {
	good := position{Range: 1, Started: true, PK: "p&<>", RK: "r\u00e9", Bytes: 42, Entities: 7, Ranges: 2, Export: "x"}.token()
	f.Add(good)
	f.Add(good[:5] + "\r\n" + good[5:])
	f.Add(good + "\n")
	f.Add(position{Ranges: 1}.token())
	f.Add("")
	f.Add(".")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseToken(s)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalid) || !errors.Is(err, entity.ErrInvalid) {
				t.Fatalf("%q: %v, want a *ConfigError matching ErrInvalid", s, err)
			}
			return
		}
		if again := p.token(); again != s {
			t.Fatalf("token %q reads as a position that writes %q", s, again)
		}
		if strings.ContainsAny(s, "\r\n") {
			t.Fatalf("token %q with CR or LF accepted", s)
		}
	})
}
