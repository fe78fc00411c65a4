package backup

import (
	"encoding/base64"
	"encoding/json"
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
}

func (p position) token() string {
	b, _ := json.Marshal(p)
	return base64.RawURLEncoding.EncodeToString(b)
}

func parseToken(s string) (position, error) {
	var p position
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return p, &ConfigError{Field: "ExportOptions.Resume", Reason: "not a token made by Export: " + err.Error()}
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, &ConfigError{Field: "ExportOptions.Resume", Reason: "not a token made by Export: " + err.Error()}
	}
	if p.Range < 0 || p.Bytes < 0 || p.Entities < 0 || p.Ranges < 1 || p.Range > p.Ranges {
		return p, &ConfigError{Field: "ExportOptions.Resume", Reason: "token out of range"}
	}
	return p, nil
}
