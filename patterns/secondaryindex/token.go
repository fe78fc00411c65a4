package secondaryindex

import "github.com/tablekit/tablekit/internal/scantoken"

// tokenPrefix marks (and versions) the resume tokens of this package.
const tokenPrefix = "si1."

// token is where a check resumes.
type token struct {
	// Phase 0 scans the primaries' partitions; phase 1 (a whole-table check
	// with Config.Entries elsewhere) the entries' table, for entries whose
	// partition has no primaries; phase 2 (a whole-table check) the
	// buckets of the TableWide indexes, for orphans.
	Phase int `json:"h,omitempty"`
	// Ix and Bucket are where phase 2 is: the index's position in the
	// Set, and the bucket's id.
	Ix     int    `json:"i,omitempty"`
	Bucket string `json:"b,omitempty"`
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
	if t.Phase < 0 || t.Phase > 2 || (t.Phase >= 1 && (t.PK != "" || t.After)) || (t.Phase == 0 && t.Page != "") ||
		(t.Phase != 2 && (t.Ix != 0 || t.Bucket != "")) || t.Ix < 0 {
		return token{}, ErrInvalidToken
	}
	return t, nil
}
