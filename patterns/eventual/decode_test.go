package eventual_test

import (
	"encoding/base64"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/patterns/eventual"
)

// DecodeMessage reads both encodings, a claim check, and refuses text that
// is not an envelope with an error matching ErrUndecodable.
func TestDecodeMessage(t *testing.T) {
	plain := `{"kind":"Archive.v1","id":"m1","created":"2024-05-01T10:00:00.1234567Z","payload":{"a":1}}`
	for _, c := range []struct {
		text string
		enc  eventual.Encoding
	}{{plain, eventual.PlainText}, {base64.StdEncoding.EncodeToString([]byte(plain)), eventual.Base64}} {
		e, err := eventual.DecodeMessage(c.text)
		if err != nil || e.Kind != "Archive.v1" || e.ID != "m1" || e.Encoding != c.enc || string(e.Payload) != `{"a":1}` || e.Created.Nanosecond() != 123456700 {
			t.Fatalf("%q: %+v %v", c.text, e, err)
		}
	}
	e, err := eventual.DecodeMessage(`{"kind":"Big.v1","id":"m2","created":"2024-05-01T10:00:00Z","claim":"Big.v1/m2"}`)
	if err != nil || e.Claim != "Big.v1/m2" || e.Payload != nil {
		t.Fatal(e, err)
	}
	for _, bad := range []string{"", "hello", "{}", `{"kind":"x"}`, "!!!", base64.StdEncoding.EncodeToString([]byte("not json")),
		`{"kind":"K.v1","id":"a","created":"2024-05-01T10:00:00Z","payload":{},"claim":"c"}`} {
		var de *eventual.DecodeError
		if _, err := eventual.DecodeMessage(bad); !errors.Is(err, eventual.ErrUndecodable) || !errors.As(err, &de) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
