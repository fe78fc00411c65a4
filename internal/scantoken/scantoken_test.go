package scantoken

import (
	"encoding/base64"
	"testing"
)

type pos struct {
	Phase int    `json:"h,omitempty"`
	PK    string `json:"p,omitempty"`
}

func TestRoundTripAndRefusals(t *testing.T) {
	s := Encode("x1.", pos{Phase: 1, PK: "Sales"})
	var p pos
	if !Decode("x1.", s, &p) || p != (pos{Phase: 1, PK: "Sales"}) {
		t.Fatalf("%q decoded to %+v", s, p)
	}
	for _, bad := range []string{
		"", "y1." + s[3:], s + "!", "x1.e30e30", // {}{}: trailing data
		Encode("x1.", map[string]int{"z": 1}), // unknown field
		Encode("x1.", []int{1}),               // not an object
		s[:6] + "\r\n" + s[6:],                // base64 skips CR and LF
		"x1." + base64.RawURLEncoding.EncodeToString([]byte(`{"p":"Sales","h":1}`)),  // members in another order
		"x1." + base64.RawURLEncoding.EncodeToString([]byte(`{"h":1, "p":"Sales"}`)), // a space
		Encode("x1.", map[string]any{"h": 0}),                                        // a zero value Encode leaves out
	} {
		var p pos
		if Decode("x1.", bad, &p) {
			t.Errorf("%q accepted as %+v", bad, p)
		}
	}
}
