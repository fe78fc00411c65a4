package indexset

import (
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// InternalPrefix starts the RowKeys of tablekit's own entities in a
// primaries' partition (outbox intents, Once markers).
const InternalPrefix = "tablekit."

const maxNameLength = 32

// Names is the names of a Set's indexes, checked as New declares them,
// and what they make of a RowKey: a primary's, or an index's (its RowKeys
// start with the index's name and "_").
type Names[P Package] struct {
	primaryPrefix string
	prefixes      []string // Name + "_", in declaration order
	byName        map[string]int
}

// NewNames returns the Names of a Set whose primaries' RowKeys start with
// primaryPrefix ("" for any).
func NewNames[P Package](primaryPrefix string) *Names[P] {
	return &Names[P]{primaryPrefix: primaryPrefix, byName: map[string]int{}}
}

// CheckName checks the Name of the index declared at position i of New's
// indexes: 1 to 32 ASCII letters and digits, so that Name + "_" starts
// its RowKeys and nothing else's.
func CheckName[P Package](i int, name string) error {
	ok := name != "" && len(name) <= maxNameLength
	for _, c := range []byte(name) {
		ok = ok && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9')
	}
	if !ok {
		return &DeclarationError[P]{Index: name, Position: i, Field: "Name", Reason: "must be 1 to 32 ASCII letters and digits"}
	}
	return nil
}

// Add checks and adds the name of the index declared at position i of
// New's indexes; call it in declaration order. A name passes CheckName,
// is used once, and makes RowKeys that the primaries' prefix tells apart
// from the primaries'.
func (n *Names[P]) Add(i int, name string) error {
	if err := CheckName[P](i, name); err != nil {
		return err
	}
	bad := func(reason string) error {
		return &DeclarationError[P]{Index: name, Position: i, Field: "Name", Reason: reason}
	}
	if _, dup := n.byName[name]; dup {
		return bad("is used twice")
	}
	prefix := name + "_"
	if n.primaryPrefix != "" && (strings.HasPrefix(n.primaryPrefix, prefix) || strings.HasPrefix(prefix, n.primaryPrefix)) {
		return bad("makes RowKeys that Config.PrimaryPrefix " + n.primaryPrefix + " does not tell apart from the primaries'")
	}
	n.byName[name] = len(n.prefixes)
	n.prefixes = append(n.prefixes, prefix)
	return nil
}

// Of returns the position of the index whose RowKeys rk looks like (it
// starts with the index's name and "_"), or -1.
func (n *Names[P]) Of(rk string) int {
	name, _, ok := strings.Cut(rk, "_")
	if !ok {
		return -1
	}
	if i, ok := n.byName[name]; ok {
		return i
	}
	return -1
}

// CheckRowKey refuses a primary RowKey that a check could not tell from
// an index's or tablekit's own, or that lacks the primaries' prefix.
func (n *Names[P]) CheckRowKey(rk string) error {
	if !strings.HasPrefix(rk, n.primaryPrefix) {
		return &RowKeyError[P]{RowKey: rk, Reason: "lacks Config.PrimaryPrefix " + n.primaryPrefix}
	}
	if strings.HasPrefix(rk, InternalPrefix) {
		return &RowKeyError[P]{RowKey: rk, Reason: "starts with tablekit's own prefix " + InternalPrefix}
	}
	if i := n.Of(rk); i >= 0 {
		p := n.prefixes[i]
		return &RowKeyError[P]{RowKey: rk, Reason: "starts with index " + p[:len(p)-1] + "'s prefix " + p}
	}
	return nil
}

// CheckKeys checks a primary's keys before anything is sent: valid keys
// (an *entity.ValidationError), and a RowKey CheckRowKey accepts.
func (n *Names[P]) CheckKeys(pk, rk string) error {
	if err := keys.Validate(pk); err != nil {
		return &entity.ValidationError{Property: "PartitionKey", Rule: entity.RuleKey, Value: Shorten(pk), Err: err}
	}
	if err := keys.Validate(rk); err != nil {
		return &entity.ValidationError{Property: "RowKey", Rule: entity.RuleKey, Value: Shorten(rk), Err: err}
	}
	return n.CheckRowKey(rk)
}

// Buckets checks the Buckets of the index declared at position i of New's
// indexes (name), for both packages' TableWide placement: 0 to max, and
// set only when wide; it returns the count to use, def for 0 (and 0 for
// an index that is not TableWide).
func Buckets[P Package](i int, name string, n int, wide bool, def, max int) (int, error) {
	bad := func(reason string) error {
		return &DeclarationError[P]{Index: name, Position: i, Field: "Buckets", Reason: reason}
	}
	switch {
	case n < 0 || n > max:
		return 0, bad("is " + strconv.Itoa(n) + ", not 0 to " + strconv.Itoa(max))
	case n != 0 && !wide:
		return 0, bad("is set on an index that is not TableWide")
	case wide && n == 0:
		return def, nil
	}
	return n, nil
}
