package eventual

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/keys"
)

// MaxMessageBytes is the largest queue message text, in UTF-8 bytes after
// encoding (64 KiB), the service's limit.
const MaxMessageBytes = 65536

// PoisonReserve is the room Enqueue leaves in every message for the record
// a wrapped poison message adds (PoisonWrapped): a message whose text is
// longer than MaxMessageBytes - PoisonReserve has its payload stored as a
// blob.
const PoisonReserve = 2048

// MaxKindLength is the longest kind name.
const MaxKindLength = 128

// MaxIDLength is the longest message id, in bytes.
const MaxIDLength = 256

// envelope is the JSON of every message:
//
//	{"kind":"ArchiveEmployee.v1","id":"…","created":"2024-05-01T10:00:00Z","payload":{…}}
//
// or, when the payload is stored as a blob (claim check), "claim" with the
// blob's name instead of "payload". Unknown members are ignored, so later
// versions may add some.
type envelope struct {
	Kind    string          `json:"kind"`
	ID      string          `json:"id"`
	Created wireTime        `json:"created"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Claim   string          `json:"claim,omitempty"`
}

// wireTime is a time written as .NET's round-trip format writes it, in UTC
// with seven fractional digits ("2024-05-01T10:00:00.1234567Z"): fixed
// width, so a message's size does not depend on the clock, and what C#
// DateTime parses without loss. Any RFC 3339 time is read.
type wireTime struct{ time.Time }

const wireTimeLayout = "2006-01-02T15:04:05.0000000Z"

func (t wireTime) MarshalJSON() ([]byte, error) {
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("eventual: time %v is out of range", t.Time)
	}
	return []byte(`"` + t.UTC().Format(wireTimeLayout) + `"`), nil
}

func (t *wireTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	t.Time = v.UTC()
	return nil
}

// validKind reports whether s is a kind name: 1 to 128 ASCII letters,
// digits, '.', '_' and '-' ("ArchiveEmployee.v1").
func validKind(s string) bool {
	if s == "" || len(s) > MaxKindLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// checkID returns why s cannot be a message id, or "". An id ends up in
// marker RowKeys and blob names, so it follows the key rules.
func checkID(s string) string {
	switch {
	case s == "":
		return "the id is empty"
	case len(s) > MaxIDLength:
		return "the id is longer than 256 bytes"
	case keys.Validate(s) != nil:
		return "the id is not a valid key: " + keys.Validate(s).Error()
	}
	return ""
}

// encodeText turns an envelope's JSON into queue message text.
func encodeText(body []byte, enc Encoding) string {
	if enc == PlainText {
		return string(body)
	}
	return base64.StdEncoding.EncodeToString(body)
}

// decodeText turns queue message text into JSON bytes, telling the
// encoding by the first character: JSON text starts with '{', which is not
// a base64 character.
func decodeText(text string) ([]byte, Encoding, error) {
	if t := strings.TrimLeft(text, " \t\r\n"); strings.HasPrefix(t, "{") {
		if !utf8.ValidString(t) {
			return nil, PlainText, &DecodeError{Reason: "the text is not valid UTF-8"}
		}
		return []byte(t), PlainText, nil
	}
	body, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil {
		return nil, Base64, &DecodeError{Reason: "the text is neither a JSON object nor base64", Err: err}
	}
	if !utf8.Valid(body) {
		return nil, Base64, &DecodeError{Reason: "the decoded text is not valid UTF-8"}
	}
	return body, Base64, nil
}

// parseEnvelope reads and checks an envelope's JSON.
func parseEnvelope(body []byte) (envelope, error) {
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		return envelope{}, &DecodeError{Reason: "the JSON is not an envelope", Err: err}
	}
	switch {
	case !validKind(e.Kind):
		return envelope{}, &DecodeError{Reason: "the kind is missing or invalid"}
	case checkID(e.ID) != "":
		return envelope{}, &DecodeError{Reason: checkID(e.ID)}
	case e.Payload == nil && e.Claim == "":
		return envelope{}, &DecodeError{Reason: "there is neither a payload nor a claim"}
	case e.Payload != nil && e.Claim != "":
		return envelope{}, &DecodeError{Reason: "there is both a payload and a claim"}
	}
	return e, nil
}

// decodeEnvelope reads queue message text.
func decodeEnvelope(text string) (envelope, error) {
	body, _, err := decodeText(text)
	if err != nil {
		return envelope{}, err
	}
	return parseEnvelope(body)
}

// PoisonRecord is what is kept about a poisoned message besides the
// message itself: as a blob named by the poison message's id
// (PoisonOriginal), or inside the poison message (PoisonWrapped). Its
// JSON is described under "Wire format" in the package documentation.
type PoisonRecord struct {
	Reason       string    `json:"reason"`          // one of the Reason constants
	Error        string    `json:"error,omitempty"` // the handler's last error, at most 1 KiB
	Kind         string    `json:"kind,omitempty"`  // the envelope's kind and id, when it decoded
	ID           string    `json:"id,omitempty"`
	DequeueCount int64     `json:"dequeueCount"`
	Queue        string    `json:"queue"`     // the queue it was poisoned from
	MessageID    string    `json:"messageId"` // its id there
	Inserted     time.Time `json:"inserted"`
	Poisoned     time.Time `json:"poisoned"`
	// Encoding is how the original text was encoded ("base64", "plain"),
	// when it is an envelope.
	Encoding string `json:"encoding,omitempty"`
	// PoisonMessageID is the id of the message's copy in the poison queue
	// (PoisonOriginal's records, which are named by it).
	PoisonMessageID string `json:"poisonMessageId,omitempty"`
}

// poisonMessage is the JSON of a poison queue message: the record, and the
// original message, as JSON ("message") when its text is compact JSON
// (base64-encoded or not, as Enqueue writes it), or else as its verbatim
// text ("text"). Either way ParsePoison gives back the original text byte
// for byte.
type poisonMessage struct {
	Poison  *PoisonRecord   `json:"poison"`
	Message json.RawMessage `json:"message,omitempty"`
	Text    *string         `json:"text,omitempty"`
}

// maxPoisonError is the most bytes of a handler's error a record keeps.
const maxPoisonError = 1 << 10

// poisonText returns the poison queue text for a message with text
// original, encoded with enc. When the record does not fit beside the
// message it is shortened, and as a last resort dropped: the original text
// is stored unchanged (the Hooks still see the record).
func poisonText(original string, rec PoisonRecord, enc Encoding) string {
	pm := poisonMessage{Poison: &rec}
	if body, origEnc, err := decodeText(original); err == nil && isCompactJSON(body) && encodeText(body, origEnc) == original {
		pm.Message = body
		rec.Encoding = origEnc.String()
	} else {
		pm.Text = &original
	}
	rec.Error = truncate(strings.ToValidUTF8(rec.Error, "\uFFFD"), maxPoisonError)
	for _, limit := range []int{-1, 128, 0} {
		if limit >= 0 {
			rec.Error = truncate(rec.Error, limit)
		}
		body, err := marshalVerbatim(pm)
		if err != nil {
			break
		}
		if text := encodeText(body, enc); len(text) <= MaxMessageBytes {
			return text
		}
	}
	return original
}

// isCompactJSON reports whether b is valid JSON with no insignificant
// whitespace, so that it survives being embedded in another document.
func isCompactJSON(b []byte) bool {
	if !json.Valid(b) {
		return false
	}
	var c bytes.Buffer
	return json.Compact(&c, b) == nil && bytes.Equal(c.Bytes(), b)
}

// marshalVerbatim is json.Marshal without HTML escaping, which would
// rewrite '<', '>' and '&' inside an embedded json.RawMessage.
func marshalVerbatim(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// truncate shortens s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ParsePoison reads the text of a wrapped poison queue message
// (PoisonWrapped, and what earlier releases wrote): its record, and the
// original message text that Replay puts back. Any other text — a poison
// message of PoisonOriginal, whose record is a blob (Processor.PoisonRecord),
// one stored unchanged because its record did not fit, or one put there by
// other software — is its own original, with ok false.
func ParsePoison(text string) (rec PoisonRecord, original string, ok bool) {
	body, _, err := decodeText(text)
	if err != nil {
		return PoisonRecord{}, text, false
	}
	var pm poisonMessage
	if err := json.Unmarshal(body, &pm); err != nil || pm.Poison == nil {
		return PoisonRecord{}, text, false
	}
	switch {
	case pm.Text != nil && pm.Message == nil:
		return *pm.Poison, *pm.Text, true
	case pm.Message != nil && pm.Text == nil:
		enc := Base64
		if pm.Poison.Encoding == PlainText.String() {
			enc = PlainText
		}
		return *pm.Poison, encodeText(pm.Message, enc), true
	}
	return PoisonRecord{}, text, false
}
