package backup

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// position is where an export stands: the next range to read, the last
// keys written in it (when started), and what was written before.
type position struct {
	Range    int    `json:"r"`
	Started  bool   `json:"s,omitempty"`
	PK       string `json:"pk,omitempty"`
	RK       string `json:"rk,omitempty"`
	Bytes    int64  `json:"b"`
	Entities int64  `json:"n"`
	Ranges   int    `json:"of"` // how many ranges the export had: a check against other options
	// Export is the fingerprint of the export that made the token (see
	// fingerprint): a token is resumed only by an export of the same
	// table with the same options.
	Export string `json:"x"`
}

// A token is the position's JSON and a checksum of it, each in unpadded
// base64url, joined by a dot: a token changed by hand (or cut short) is
// refused rather than resumed from a position nobody wrote.
const tokenSep = "."

func (p position) token() string {
	// Without HTML escaping, which would take six bytes for each '&', '<'
	// or '>' of a key: ExportBlob keeps the token in blob metadata, which
	// the service limits to 8 KiB.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(p)
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(b) + tokenSep + base64.RawURLEncoding.EncodeToString(sum[:12])
}

func parseToken(s string) (position, error) {
	var p position
	body, check, ok := strings.Cut(s, tokenSep)
	if !ok {
		return p, &ConfigError{Field: "ExportOptions.Resume", Reason: "not a token made by Export: no checksum"}
	}
	b, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return p, &ConfigError{Field: "ExportOptions.Resume", Reason: "not a token made by Export: " + err.Error()}
	}
	sum := sha256.Sum256(b)
	if c, err := base64.RawURLEncoding.DecodeString(check); err != nil || !bytes.Equal(c, sum[:12]) {
		return p, &ConfigError{Field: "ExportOptions.Resume", Reason: "not a token made by Export: its checksum does not match (changed or cut short)"}
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, &ConfigError{Field: "ExportOptions.Resume", Reason: "not a token made by Export: " + err.Error()}
	}
	if p.Range < 0 || p.Bytes < 0 || p.Entities < 0 || p.Ranges < 1 || p.Range > p.Ranges {
		return p, &ConfigError{Field: "ExportOptions.Resume", Reason: "token out of range"}
	}
	if p.token() != s {
		// One spelling per position: base64 skips CR and LF, and JSON
		// allows spaces, escapes and members in any order.
		return position{}, &ConfigError{Field: "ExportOptions.Resume", Reason: "not a token made by Export: not in the form Export writes"}
	}
	return p, nil
}

// fingerprint names an export by what decides its bytes: the table, the
// ranges, the filter and the segment size (not Parallel, which changes
// nothing written). filter is the Filter as built.
func fingerprint(table string, o ExportOptions, filter string) string {
	b, _ := json.Marshal(struct {
		Table   string  `json:"t"`
		Ranges  []Range `json:"r"`
		Filter  string  `json:"f"`
		Segment int     `json:"s"`
	}{table, o.Ranges, filter, o.SegmentEntities})
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}
