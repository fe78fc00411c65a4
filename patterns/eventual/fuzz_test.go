package eventual

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzDecodeEnvelope feeds arbitrary queue message text to the decoder
// every delivery goes through: it never panics, DecodeMessage (the public
// reader) agrees with it, and what it accepts re-encodes, in both
// encodings, to an envelope that decodes the same.
func FuzzDecodeEnvelope(f *testing.F) {
	body := `{"kind":"ArchiveEmployee.v1","id":"a1","created":"2024-05-01T10:00:00Z","payload":{"id":"000123"}}`
	f.Add(body)
	f.Add(base64.StdEncoding.EncodeToString([]byte(body)))
	f.Add(`{"kind":"K.v1","id":"x","created":"2024-05-01T10:00:00Z","claim":"K.v1/x"}`)
	f.Add("not an envelope")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		e, err := decodeEnvelope(text)
		pub, perr := DecodeMessage(text)
		if (err == nil) != (perr == nil) {
			t.Fatalf("decodeEnvelope: %v, DecodeMessage: %v", err, perr)
		}
		if err != nil {
			return
		}
		if wantEnc := PlainText; pub.Kind != e.Kind || pub.ID != e.ID || !pub.Created.Equal(e.Created.Time) || string(pub.Payload) != string(e.Payload) || pub.Claim != e.Claim ||
			(pub.Encoding == wantEnc) != strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "{") {
			t.Fatalf("DecodeMessage gave %+v for %+v", pub, e)
		}
		out, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("an accepted envelope does not encode: %v", err)
		}
		for _, enc := range []Encoding{Base64, PlainText} {
			again, err := decodeEnvelope(encodeText(out, enc))
			if err != nil {
				t.Fatalf("%v: re-encoded envelope does not decode: %v\n%s", enc, err, out)
			}
			if again.Kind != e.Kind || again.ID != e.ID || !again.Created.Equal(e.Created.Truncate(100*time.Nanosecond)) ||
				string(again.Payload) != string(e.Payload) && !jsonEqual(again.Payload, e.Payload) || again.Claim != e.Claim {
				t.Fatalf("%v: %+v became %+v", enc, e, again)
			}
		}
	})
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return string(ax) == string(by)
}

// FuzzPoison checks the poison queue format, which Replay reads back:
// ParsePoison never panics on any text, and any message text the service
// can hold comes back byte for byte from its poison message, with its
// record, unless the record could not fit (then the text is stored as is).
func FuzzPoison(f *testing.F) {
	env := `{"kind":"K.v1","id":"a1","created":"2024-05-01T10:00:00Z","payload":{"x":"<&>"}}`
	f.Add(env, "boom", false)
	f.Add(base64.StdEncoding.EncodeToString([]byte(env)), "boom", true)
	f.Add(`{"a": 1}`, "", false)
	f.Add("not an envelope", "\"quoted\" <error>", true)
	f.Add(`{"poison":{"reason":"x"},"text":"t"}`, "", false)
	f.Add(`{"poison":{"reason":"x"},"message":{"kind":"K.v1"}}`, "", true)
	f.Fuzz(func(t *testing.T, text, cause string, base64Out bool) {
		ParsePoison(text) // must not panic on anything
		if !utf8.ValidString(text) || len(text) > MaxMessageBytes {
			return // not a text the queue service holds
		}
		enc := PlainText
		if base64Out {
			enc = Base64
		}
		rec := PoisonRecord{Reason: ReasonFailed, Error: cause, DequeueCount: 5, Queue: "q", MessageID: "m", Poisoned: time.Unix(0, 0).UTC()}
		p := poisonText(text, rec, enc)
		if len(p) > MaxMessageBytes {
			t.Fatalf("poison text of %d bytes", len(p))
		}
		got, back, ok := ParsePoison(p)
		if p == text && !ok {
			return // the record did not fit; the text is kept as is
		}
		if !ok || back != text {
			t.Fatalf("ParsePoison(poisonText(%q)) = %q, ok %v", text, back, ok)
		}
		if got.Reason != ReasonFailed || got.DequeueCount != 5 || len(got.Error) > maxPoisonError {
			t.Fatalf("record %+v", got)
		}
	})
}
