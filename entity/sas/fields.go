package sas

import (
	"net/netip"
	"strings"
	"time"
)

// Permissions is what a table SAS lets its holder do with entities.
// The service checks them per operation (an upsert needs Add and Update).
type Permissions uint8

// The four table permissions, in the order the service requires them in a
// token ("raud").
const (
	Read   Permissions = 1 << iota // r: get and query entities
	Add                            // a: insert entities
	Update                         // u: update and merge entities
	Delete                         // d: delete entities

	// ReadWrite is every permission: what the owner of a partition needs.
	ReadWrite = Read | Add | Update | Delete
)

const tableLetters = "raud"

// String returns the permission letters in the service's order, such as
// "ru".
func (p Permissions) String() string { return letters(uint16(p), tableLetters) }

// AccountPermissions is what an account SAS lets its holder do. Only the
// letters that mean something to the Table service are offered.
type AccountPermissions uint8

// The account permissions of the Table service, in the order the service
// requires them in a token ("rwdlacu").
const (
	AccountRead   AccountPermissions = 1 << iota // r: query entities; read service properties and stats
	AccountWrite                                 // w: set service properties; create tables
	AccountDelete                                // d: delete entities and tables
	AccountList                                  // l: list tables
	AccountAdd                                   // a: insert entities (or upsert)
	AccountCreate                                // c: create tables
	AccountUpdate                                // u: update and merge entities (or upsert)
)

const accountLetters = "rwdlacu"

// String returns the permission letters in the service's order.
func (p AccountPermissions) String() string { return letters(uint16(p), accountLetters) }

// ResourceTypes are the levels of the Table service an account SAS reaches.
type ResourceTypes uint8

// The resource types, in the order the service requires them ("sco").
const (
	Service   ResourceTypes = 1 << iota // s: service properties and stats, listing tables
	Container                           // c: creating and deleting tables
	Object                              // o: entities
)

const resourceLetters = "sco"

// String returns the resource type letters in the service's order.
func (r ResourceTypes) String() string { return letters(uint16(r), resourceLetters) }

func letters(bits uint16, alphabet string) string {
	var b strings.Builder
	for i := range len(alphabet) {
		if bits&(1<<i) != 0 {
			b.WriteByte(alphabet[i])
		}
	}
	return b.String()
}

// parseLetters reads a permission string: letters of alphabet, each at most
// once, in the alphabet's order, which the service requires.
func parseLetters(field, s, alphabet string) (uint16, error) {
	var bits uint16
	last := -1
	for i := range len(s) {
		at := strings.IndexByte(alphabet, s[i])
		switch {
		case at < 0:
			return 0, invalid(field, s, "unknown letter "+quote(s[i:i+1])+"; the letters are "+quote(alphabet))
		case at <= last:
			return 0, invalid(field, s, "letters repeated or out of order; the service requires the order "+quote(alphabet))
		}
		last = at
		bits |= 1 << at
	}
	return bits, nil
}

// Protocol is the signed protocol (spr): which schemes may carry the token.
type Protocol string

const (
	// HTTPS allows requests over HTTPS only.
	HTTPS Protocol = "https"
	// HTTPSOrHTTP allows both, which is also the service's default when the
	// token names no protocol. HTTP alone is not a value the service allows.
	HTTPSOrHTTP Protocol = "https,http"
)

func (p Protocol) check() error {
	switch p {
	case "", HTTPS, HTTPSOrHTTP:
		return nil
	}
	return invalid("spr", string(p), `the protocol is "https" or "https,http"`)
}

// IPRange is the signed IP range (sip): the addresses a request may come
// from, inclusive. The zero IPRange allows any address; an End of zero
// means the single address Start.
type IPRange struct {
	Start, End netip.Addr
}

// IsZero reports whether r allows any address.
func (r IPRange) IsZero() bool { return !r.Start.IsValid() && !r.End.IsValid() }

// String returns the range as the token carries it: "168.1.5.65" or
// "168.1.5.60-168.1.5.70"; "" for the zero range.
func (r IPRange) String() string {
	if r.IsZero() {
		return ""
	}
	if !r.End.IsValid() || r.End == r.Start {
		return r.Start.String()
	}
	return r.Start.String() + "-" + r.End.String()
}

func (r IPRange) check() error {
	switch {
	case r.IsZero():
		return nil
	case !r.Start.IsValid():
		return invalid("sip", r.String(), "an IP range needs a Start address")
	case r.Start.Zone() != "" || r.End.Zone() != "":
		return invalid("sip", r.String(), "addresses with a zone cannot be signed")
	case r.End.IsValid() && (r.Start.Is4() != r.End.Is4() || r.End.Less(r.Start)):
		return invalid("sip", r.String(), "the range is empty or mixes address families")
	}
	return nil
}

// ParseIPRange reads a range as the token carries it.
func ParseIPRange(s string) (IPRange, error) {
	if s == "" {
		return IPRange{}, nil
	}
	from, to, isRange := strings.Cut(s, "-")
	var r IPRange
	var err error
	if r.Start, err = netip.ParseAddr(from); err != nil {
		return IPRange{}, &FieldError{Field: "sip", Value: quote(s), Reason: "not an IP address or range", Err: err}
	}
	if isRange {
		if r.End, err = netip.ParseAddr(to); err != nil {
			return IPRange{}, &FieldError{Field: "sip", Value: quote(s), Reason: "not an IP address or range", Err: err}
		}
	}
	if err := r.check(); err != nil {
		return IPRange{}, err
	}
	return r, nil
}

// timeLayout is how tokens made here write st and se: UTC, whole seconds,
// the form every SDK uses.
const timeLayout = "2006-01-02T15:04:05Z"

// parseLayouts are the forms the REST reference allows for st and se:
// YYYY-MM-DD, YYYY-MM-DDThh:mmZ and YYYY-MM-DDThh:mm:ssZ (time.Parse also
// takes fractional seconds after the seconds, which some tools write).
var parseLayouts = []string{timeLayout, "2006-01-02T15:04Z", "2006-01-02"}

// formatTime writes t as the token carries it; "" for the zero time.
func formatTime(field string, t time.Time) (string, error) {
	if t.IsZero() {
		return "", nil
	}
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return "", invalid(field, t.String(), "the year must be 1 to 9999")
	}
	return t.Format(timeLayout), nil
}

func parseTime(field, s string) (time.Time, error) {
	for _, layout := range parseLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, invalid(field, s, "not a UTC time of the form YYYY-MM-DD, YYYY-MM-DDThh:mmZ or YYYY-MM-DDThh:mm:ssZ")
}
