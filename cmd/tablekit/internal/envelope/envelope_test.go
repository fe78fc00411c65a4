package envelope

import (
	"encoding/base64"
	"errors"
	"testing"
)

func TestDecode(t *testing.T) {
	plain := `{"kind":"Archive.v1","id":"m1","created":"2024-05-01T10:00:00.1234567Z","payload":{"a":1}}`
	for _, c := range []struct {
		text, enc string
	}{{plain, "plain"}, {base64.StdEncoding.EncodeToString([]byte(plain)), "base64"}} {
		e, err := Decode(c.text)
		if err != nil || e.Kind != "Archive.v1" || e.ID != "m1" || e.Encoding != c.enc || string(e.Payload) != `{"a":1}` || e.Created.Nanosecond() != 123456700 {
			t.Fatalf("%q: %+v %v", c.text, e, err)
		}
	}
	e, err := Decode(`{"kind":"Big.v1","id":"m2","created":"2024-05-01T10:00:00Z","claim":"Big.v1/m2"}`)
	if err != nil || e.Claim != "Big.v1/m2" {
		t.Fatal(e, err)
	}
	for _, bad := range []string{"", "hello", "{}", `{"kind":"x"}`, "!!!", base64.StdEncoding.EncodeToString([]byte("not json"))} {
		if _, err := Decode(bad); !errors.Is(err, ErrNotEnvelope) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
