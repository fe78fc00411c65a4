package eventual

import (
	"encoding/json"
	"time"
)

// Envelope is what a queue message says of itself, as DecodeMessage reads
// it: the envelope of the "Wire format" section, for tools that show a
// queue's messages (the tablekit command's queue peek) without handling
// them.
type Envelope struct {
	Kind     string          // the message kind, "ArchiveEmployee.v1"
	ID       string          // the message id
	Created  time.Time       // when the message was made, UTC
	Payload  json.RawMessage // the payload's JSON; nil when Claim is set
	Claim    string          // the blob holding a large payload (claim check), or ""
	Encoding Encoding        // how the text was written: Base64 or PlainText
}

// DecodeMessage reads the text of a message an Outbox or Enqueue wrote,
// with the checks a worker applies before handling it (a valid kind and id,
// a payload or a claim but not both). Text that is not an envelope is a
// *DecodeError. It reads the text only: a claimed payload stays in its blob.
// FuzzDecodeEnvelope checks that it never panics and agrees with the
// workers' own decoding.
func DecodeMessage(text string) (Envelope, error) {
	body, enc, err := decodeText(text)
	if err != nil {
		return Envelope{}, err
	}
	e, err := parseEnvelope(body)
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{Kind: e.Kind, ID: e.ID, Created: e.Created.Time, Payload: e.Payload, Claim: e.Claim, Encoding: enc}, nil
}
