package indexentity

import "github.com/tablekit/tablekit/internal/scantoken"

// tokenPrefix marks (and versions) the resume tokens of this package.
const tokenPrefix = "ie1."

// token is where a check resumes.
type token struct {
	// Phase 0 checks the primaries' partitions; phase 1 (a whole-table
	// check) the lists of OtherPartition and Blob indexes whose partition
	// has no primaries, and the TableWide lists, index by index; phase 2
	// the index entities of SamePartition and Blob indexes in
	// Config.Entries, phase 3 the blobs of indexes that keep none, which
	// another layout left.
	Phase int `json:"h,omitempty"`
	// Index is the position among the Set's indexes of phases 1 to 3.
	Index int `json:"i,omitempty"`
	// PK is the primaries' partition to start at, or after when After
	// (phase 2: a partition of Config.Entries; phase 3: a blob's name).
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
	if t.Phase < 0 || t.Phase > 3 || t.Index < 0 || (t.Phase == 0 && t.Index != 0) {
		return token{}, ErrInvalidToken
	}
	return t, nil
}
