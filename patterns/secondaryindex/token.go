package secondaryindex

import "github.com/tablekit/tablekit/internal/scantoken"

// tokenPrefix marks (and versions) the resume tokens of this package.
const tokenPrefix = "si1."

// token is where a check resumes.
type token struct {
	// Phase 0 scans the primaries' partitions; phase 1 (a whole-table check
	// with Config.Entries elsewhere) the entries' table, for entries whose
	// partition has no primaries.
	Phase int `json:"h,omitempty"`
	// PK is the primaries' partition to start at, or after when After.
	PK    string `json:"p,omitempty"`
	After bool   `json:"a,omitempty"`
	// Page is phase 1's page token of the entries' table.
	Page string `json:"t,omitempty"`
}

func (t token) String() string { return scantoken.Encode(tokenPrefix, t) }

// parseToken reads a resume token; "" is the start of a scan.
func parseToken(s string) (token, error) {
	var t token
	if s == "" {
		return t, nil
	}
	if !scantoken.Decode(tokenPrefix, s, &t) {
		return token{}, ErrInvalidToken
	}
	if t.Phase < 0 || t.Phase > 1 || (t.Phase == 1 && (t.PK != "" || t.After)) || (t.Phase == 0 && t.Page != "") {
		return token{}, ErrInvalidToken
	}
	return t, nil
}
