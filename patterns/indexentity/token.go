package indexentity

import "github.com/tablekit/tablekit/internal/scantoken"

// tokenPrefix marks (and versions) the resume tokens of this package.
const tokenPrefix = "ie1."

// token is where a check resumes.
type token struct {
	// Phase 0 checks the primaries' partitions; phase 1 (a whole-table
	// check) the lists of OtherPartition and Blob indexes whose partition
	// has no primaries, index by index.
	Phase int `json:"h,omitempty"`
	// Index is phase 1's position among the Set's indexes.
	Index int `json:"i,omitempty"`
	// PK is the primaries' partition to start at, or after when After.
	PK    string `json:"p,omitempty"`
	After bool   `json:"a,omitempty"`
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
	if t.Phase < 0 || t.Phase > 1 || t.Index < 0 || (t.Phase == 0 && t.Index != 0) {
		return token{}, ErrInvalidToken
	}
	return t, nil
}
