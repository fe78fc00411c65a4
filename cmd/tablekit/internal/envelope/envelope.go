// Package envelope reads the text of a patterns/eventual queue message for
// display: the envelope its "Wire format" documents — a JSON object with
// "kind", "id", "created" and "payload" (or "claim", the blob holding a
// large payload), base64-encoded or as is. Package eventual decodes
// envelopes only inside its workers; this is the read-only view a tool
// needs, written to that documented format.
package envelope

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// Envelope is what a message says of itself.
type Envelope struct {
	Kind     string          `json:"kind"`
	ID       string          `json:"id"`
	Created  time.Time       `json:"created"`
	Payload  json.RawMessage `json:"payload,omitempty"`
	Claim    string          `json:"claim,omitempty"`
	Encoding string          `json:"-"` // "base64" or "plain"
}

// ErrNotEnvelope reports text that is not an envelope (in either encoding).
var ErrNotEnvelope = errors.New("not an eventual message envelope")

// Decode reads a message's text.
func Decode(text string) (Envelope, error) {
	var e Envelope
	body := strings.TrimLeft(text, " \t\r\n")
	e.Encoding = "plain"
	if !strings.HasPrefix(body, "{") {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
		if err != nil {
			return Envelope{}, ErrNotEnvelope
		}
		body, e.Encoding = string(b), "base64"
	}
	if !utf8.ValidString(body) {
		return Envelope{}, ErrNotEnvelope
	}
	var raw struct {
		Kind    *string         `json:"kind"`
		ID      *string         `json:"id"`
		Created string          `json:"created"`
		Payload json.RawMessage `json:"payload"`
		Claim   string          `json:"claim"`
	}
	if err := json.Unmarshal([]byte(body), &raw); err != nil || raw.Kind == nil || raw.ID == nil {
		return Envelope{}, ErrNotEnvelope
	}
	e.Kind, e.ID, e.Payload, e.Claim = *raw.Kind, *raw.ID, raw.Payload, raw.Claim
	if raw.Created != "" {
		if t, err := time.Parse(time.RFC3339Nano, raw.Created); err == nil {
			e.Created = t.UTC()
		}
	}
	return e, nil
}
