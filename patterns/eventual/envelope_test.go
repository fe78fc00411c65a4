package eventual

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDecodeEnvelope(t *testing.T) {
	created := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	body := `{"kind":"ArchiveEmployee.v1","id":"a1","created":"2024-05-01T10:00:00Z","payload":{"id":"000123"}}`
	for name, text := range map[string]string{
		"plain":             body,
		"base64":            base64.StdEncoding.EncodeToString([]byte(body)),
		"plain, whitespace": "\n  " + body,
		"base64, newline":   base64.StdEncoding.EncodeToString([]byte(body)) + "\n",
	} {
		e, err := decodeEnvelope(text)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if e.Kind != "ArchiveEmployee.v1" || e.ID != "a1" || !e.Created.Equal(created) || string(e.Payload) != `{"id":"000123"}` {
			t.Errorf("%s: %+v", name, e)
		}
	}
	for name, text := range map[string]string{
		"empty":            "",
		"not base64":       "not an envelope",
		"base64 not JSON":  base64.StdEncoding.EncodeToString([]byte("hello")),
		"JSON array":       `[1,2]`,
		"no kind":          `{"id":"a1","created":"2024-05-01T10:00:00Z","payload":{}}`,
		"bad kind":         `{"kind":"a b","id":"a1","created":"2024-05-01T10:00:00Z","payload":{}}`,
		"no id":            `{"kind":"K.v1","created":"2024-05-01T10:00:00Z","payload":{}}`,
		"id with slash":    `{"kind":"K.v1","id":"a/b","created":"2024-05-01T10:00:00Z","payload":{}}`,
		"no payload":       `{"kind":"K.v1","id":"a1","created":"2024-05-01T10:00:00Z"}`,
		"payload, claim":   `{"kind":"K.v1","id":"a1","created":"2024-05-01T10:00:00Z","payload":{},"claim":"K.v1/a1"}`,
		"bad created":      `{"kind":"K.v1","id":"a1","created":"yesterday","payload":{}}`,
		"kind not string":  `{"kind":1,"id":"a1","payload":{}}`,
		"invalid UTF-8":    "{\"kind\":\"K.v1\",\"id\":\"\xff\",\"payload\":{}}",
		"truncated":        `{"kind":"K.v1","id":"a1","payl`,
		"kind too long":    `{"kind":"` + strings.Repeat("k", 129) + `","id":"a1","payload":{}}`,
		"id too long":      `{"kind":"K.v1","id":"` + strings.Repeat("i", 257) + `","payload":{}}`,
		"control char id":  `{"kind":"K.v1","id":"a\u0001","payload":{}}`,
		"trailing garbage": body + "x",
	} {
		_, err := decodeEnvelope(text)
		var de *DecodeError
		if !errors.Is(err, ErrUndecodable) || !errors.As(err, &de) {
			t.Errorf("%s: %v, want a *DecodeError", name, err)
		}
	}
}

func TestPoisonRoundTrip(t *testing.T) {
	rec := PoisonRecord{Reason: ReasonFailed, Error: "boom", DequeueCount: 5, Queue: "q", MessageID: "m"}
	env := `{"kind":"K.v1","id":"a1","created":"2024-05-01T10:00:00Z","payload":{"x":1}}`
	for _, original := range []string{
		env,
		base64.StdEncoding.EncodeToString([]byte(env)),
		"not an envelope",
		base64.StdEncoding.EncodeToString([]byte("not JSON")),
		"",
	} {
		for _, enc := range []Encoding{Base64, PlainText} {
			text := poisonText(original, rec, enc)
			got, back, ok := ParsePoison(text)
			if !ok || back != original || got.Reason != rec.Reason || got.Error != rec.Error || got.DequeueCount != 5 {
				t.Errorf("%q in %v: ParsePoison = %+v, %q, %v", original, enc, got, back, ok)
			}
			if enc == Base64 && strings.HasPrefix(text, "{") {
				t.Errorf("%q: poison text not base64", original)
			}
		}
	}
	// Text that is no poison message of ours is its own original.
	for _, text := range []string{"hello", `{"poison":null}`, `{"a":1}`} {
		if _, back, ok := ParsePoison(text); ok || back != text {
			t.Errorf("ParsePoison(%q) = %q, %v", text, back, ok)
		}
	}
}

// TestLargestInlineMessageCanBePoisoned checks the size arithmetic: the
// largest message Enqueue sends inline still fits its poison record, a long
// error is shortened to fit, and a foreign message too large for a record
// is kept unchanged.
func TestLargestInlineMessageCanBePoisoned(t *testing.T) {
	p, err := New([]Queue{testQueue(t)}, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []Encoding{Base64, PlainText} {
		// Creation times of any clock give messages of one size.
		p.cfg.Encoding = enc
		// Find the largest payload that stays inline.
		lo, hi := 0, MaxMessageBytes
		for lo < hi {
			mid := (lo + hi + 1) / 2
			_, err := p.prepare(Message{Kind: "K.v1", ID: strings.Repeat("i", MaxIDLength), Payload: json.RawMessage(`"` + strings.Repeat("x", mid) + `"`)})
			switch {
			case err == nil:
				lo = mid
			case errors.Is(err, ErrTooLarge):
				hi = mid - 1
			default:
				t.Fatal(err)
			}
		}
		o, err := p.prepare(Message{Kind: "K.v1", ID: strings.Repeat("i", MaxIDLength), Payload: json.RawMessage(`"` + strings.Repeat("x", lo) + `"`)})
		if err != nil || o.claim != "" || len(o.text) > MaxMessageBytes-PoisonReserve {
			t.Fatalf("%v: largest inline message: %d bytes, claim %q, %v", enc, len(o.text), o.claim, err)
		}
		rec := PoisonRecord{
			Reason: ReasonFailed, Error: strings.Repeat("<\"error\">", 500), Kind: "K.v1", ID: strings.Repeat("i", MaxIDLength),
			DequeueCount: 5, Queue: strings.Repeat("q", 56), MessageID: "0c6a8e0f-4b4e-4a43-9f0c-5f7b5d8f2a11",
			Inserted: time.Now(), Poisoned: time.Now(),
		}
		text := poisonText(o.text, rec, enc)
		if len(text) > MaxMessageBytes {
			t.Fatalf("%v: poison text of %d bytes", enc, len(text))
		}
		got, back, ok := ParsePoison(text)
		if !ok || back != o.text || got.Reason != ReasonFailed {
			t.Errorf("%v: the largest inline message lost its record (ok %v)", enc, ok)
		}
		if len(got.Error) > maxPoisonError {
			t.Errorf("%v: error of %d bytes kept", enc, len(got.Error))
		}
	}
	// A message of someone else's at the service's limit: no room for a
	// record, stored unchanged.
	full := strings.Repeat("A", MaxMessageBytes)
	if got := poisonText(full, PoisonRecord{Reason: ReasonUndecodable}, Base64); got != full {
		t.Errorf("a full-size foreign message was changed to %d bytes", len(got))
	}
}

func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"héllo", 2, "h"}, // é is two bytes: never cut inside it
		{"héllo", 3, "hé"},
		{"abc", 0, ""},
	} {
		if got := truncate(c.s, c.n); got != c.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
