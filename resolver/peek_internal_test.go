package resolver

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

func TestPeek(t *testing.T) {
	for _, tc := range []struct {
		body         string
		want         uint8
		pk, rk, disc string
		discFound    bool
	}{
		{`{"PartitionKey":"a","RowKey":"b","T":"x"}`, wantPK | wantRK | wantDisc, "a", "b", "x", true},
		{` { "T" : "x" , "PartitionKey" : "a" } `, wantPK | wantDisc, "a", "", "x", true},
		{`{"N":{"T":"inner","a":[1,"]}"]},"S":"say \"T\":\"no\"","T":"yes"}`, wantDisc, "", "", "yes", true},
		{`{"A":"back\\","T":"after backslash"}`, wantDisc, "", "", "after backslash", true},
		{`{"\u0054":"escaped key"}`, wantDisc, "", "", "escaped key", true},
		{`{"T":"caf\u00e9"}`, wantDisc, "", "", "café", true},
		{`{"T":null}`, wantDisc, "", "", "", true},
		{`{}`, wantDisc, "", "", "", false},
		// Only what was asked for is recorded; the first occurrence wins.
		{`{"T":"one","T":"two"}`, wantDisc, "", "", "one", true},
		{`{"RowKey":"r","T":"x"}`, wantDisc, "", "", "x", true},
	} {
		h, err := peek([]byte(tc.body), tc.want, "T")
		if err != nil {
			t.Errorf("peek(%s): %v", tc.body, err)
			continue
		}
		pk, _ := h.pk.text()
		rk, _ := h.rk.text()
		disc, _ := h.disc.text()
		if pk != tc.pk || rk != tc.rk || disc != tc.disc || h.disc.found != tc.discFound {
			t.Errorf("peek(%s) = pk %q rk %q disc %q (found %v)", tc.body, pk, rk, disc, h.disc.found)
		}
	}
	for _, bad := range []string{``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":"b"`, `{"a":"b" "c":1}`, `{"a:1}`, `{"a":{"b":1}`, `{1:2}`, `{"a":"\"}`} {
		if _, err := peek([]byte(bad), wantDisc, "T"); !errors.Is(err, entity.ErrDecode) {
			t.Errorf("peek(%q) = %v, want ErrDecode", bad, err)
		}
	}
	// Peek stops once it has what it wants: what follows is not read.
	if h, err := peek([]byte(`{"T":"x", garbage`), wantDisc, "T"); err != nil || string(h.disc.b) != "x" {
		t.Errorf("early stop: %v", err)
	}
}
