package state

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

type pos struct {
	Table  string
	Ranges []string
	N      int64
}

func TestTokenRoundTrip(t *testing.T) {
	in := pos{Table: "T", Ranges: []string{"", "O'Brien", "🎉"}, N: 42}
	tok, err := Encode(in)
	if err != nil || !strings.HasPrefix(tok, Prefix) || strings.ContainsAny(tok, " '\"$&;") {
		t.Fatalf("%q, %v", tok, err)
	}
	var out pos
	if err := Decode(tok, &out); err != nil || out.Table != in.Table || out.N != 42 || len(out.Ranges) != 3 || out.Ranges[1] != "O'Brien" {
		t.Fatalf("%+v, %v", out, err)
	}
	// Changed, cut, foreign.
	for _, bad := range []string{tok[:len(tok)-3], tok[:len(tok)-1] + "A", "tk1.", "hello", "tk2." + tok[4:], ""} {
		if bad == tok {
			continue
		}
		if err := Decode(bad, &out); !errors.Is(err, ErrBadToken) {
			t.Errorf("Decode(%q) = %v", bad, err)
		}
	}
	path := filepath.Join(t.TempDir(), "ck")
	if err := Save(path, tok); err != nil {
		t.Fatal(err)
	}
	got, err := Load("@" + path)
	if err != nil || got != tok {
		t.Fatalf("%q %v", got, err)
	}
	if got, _ := Load(tok); got != tok {
		t.Fatal(got)
	}
}
