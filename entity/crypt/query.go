package crypt

import (
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/entity/internal/protect"
)

// query checks and translates a query for the service: filters on
// encrypted properties become beacon matches or are refused, and a $select
// brings back what the signature covers. beaconed reports a beacon match.
// partitions, for QueryPartitions, are the partitions q runs in (each as
// q's filter and PartitionKey eq pk); nil for a query of the whole table.
func (t *Table[T]) query(q entity.Query, partitions []string, fanOut bool) (_ entity.Query, beaconed bool, err error) {
	if !q.Filter.IsEmpty() {
		at := t.points(q.Filter, partitions, fanOut)
		f, err := q.Filter.Rewrite(func(c filter.Comparison) (filter.Expr, error) {
			e, b, err := t.comparison(at, c)
			beaconed = beaconed || b
			return e, err
		})
		if err != nil {
			return q, false, err
		}
		q.Filter = f
	}
	if len(q.Select) > 0 {
		if t.fields == nil || t.core.encrypt != nil || t.core.sign != nil {
			return q, false, &entity.ValidationError{Rule: "select", Limit: "no $select when Config.Encrypt or Config.Sign choose protected properties per entity: the signature needs all of them"}
		}
		sel := append([]string(nil), q.Select...)
		// In a fixed order: the select is part of a page token's query.
		for _, name := range slices.Sorted(maps.Keys(t.core.tags)) {
			if !contains(sel, name) {
				sel = append(sel, name)
			}
		}
		sel = append(sel, MetadataProperty)
		for _, b := range slices.Sorted(maps.Keys(t.core.beacons)) {
			sel = append(sel, BeaconPrefix+b)
		}
		if t.core.legacy {
			sel = append(sel, legacyKeyProperty, legacySetProperty)
		}
		q.Select = sel
	}
	return q, beaconed, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// point is the keys of one entity.
type point struct{ pk, rk string }

// points returns the entities a filter can match when it pins each to its
// keys (filter.Plan's Point: PartitionKey eq and RowKey eq constrain the
// whole filter), one per partition of a fan-out; nil when it does not,
// and so can match entities of any keys. Config.Encrypt is a function of
// both keys: only at these points can a query ask it what is stored.
func (t *Table[T]) points(f filter.Expr, partitions []string, fanOut bool) []point {
	if t.core.encrypt == nil {
		return nil // not asked
	}
	if !fanOut {
		if p := f.Plan(); p.Kind == filter.Point {
			return []point{{p.PartitionKey, p.RowKey}}
		}
		return nil
	}
	at := make([]point, 0, len(partitions))
	for _, pk := range partitions {
		p := filter.And(filter.PK(pk), f).Plan()
		if p.Kind != filter.Point {
			return nil
		}
		at = append(at, point{p.PartitionKey, p.RowKey})
	}
	if len(at) == 0 {
		// No partition, no request: nothing is matched, the filter is
		// sent nowhere.
		return []point{}
	}
	return at
}

// systemProperty reports the properties the service keeps in clear
// whatever Config says: the keys and the Timestamp.
func systemProperty(name string) bool {
	return name == filter.PartitionKeyProperty || name == filter.RowKeyProperty || name == "Timestamp"
}

// comparison translates one comparison. at are the entities the filter is
// pinned to (see points): a property Config.Encrypt may choose filters in
// clear only when at names entities and the function says clear for every
// one, and through its beacon only when it says encrypt for every one;
// otherwise some matching entities would hold the property one way and
// some the other, and the service would silently miss some.
func (t *Table[T]) comparison(at []point, c filter.Comparison) (filter.Expr, bool, error) {
	name := c.Property
	if strings.HasPrefix(name, ReservedPrefix) {
		return filter.Expr{}, false, &FilterError{Property: name, Reason: "reserved for encryption metadata"}
	}
	if systemProperty(name) {
		return filter.Compare(name, c.Op, c.Value), false, nil
	}
	tagged := t.core.tags[name] // T's tags and Config.Types'
	var edm entity.EDMType
	if f, ok := t.fields[name]; ok {
		edm = entity.EDMType(f.EDM)
	}
	encrypted := tagged&protect.Encrypt != 0
	if !encrypted && t.core.mayEncrypt(name) {
		if at == nil {
			return filter.Expr{}, false, &FilterError{Property: name, Reason: "Config.Encrypt may encrypt it for some keys, and there the service holds only ciphertext: " +
				"filter on it only in a point query (PartitionKey eq and RowKey eq) of an entity for which Config.Encrypt says clear, " +
				"list the properties Config.Encrypt can choose in Config.Encryptable, or filter on the client"}
		}
		n := 0
		for _, p := range at {
			if t.core.encrypt(p.pk, p.rk, name) {
				n++
			}
		}
		switch {
		case n == 0:
			return filter.Compare(name, c.Op, c.Value), false, nil
		case n < len(at):
			return filter.Expr{}, false, &FilterError{Property: name, Reason: "Config.Encrypt encrypts it for some of the entities the filter names and not for others: filter them apart"}
		}
		encrypted = true
	}
	if !encrypted {
		return filter.Compare(name, c.Op, c.Value), false, nil
	}
	if !t.core.beacons[name] {
		return filter.Expr{}, false, &FilterError{Property: name, Reason: "encrypted, so the service holds only ciphertext; list it in Config.Beacons to allow eq and ne (which reveals equal values), or filter on the client"}
	}
	if c.Op != filter.OpEq && c.Op != filter.OpNe {
		return filter.Expr{}, false, &FilterError{Property: name, Reason: "a beacon answers eq and ne only, not " + c.Op.String()}
	}
	vedm, v, err := literalValue(c.Value)
	if err != nil {
		return filter.Expr{}, false, &FilterError{Property: name, Reason: err.Error()}
	}
	if edm != 0 && vedm != edm {
		return filter.Expr{}, false, &FilterError{Property: name, Reason: "the property is " + edm.String() + ", the value " + vedm.String() + ": an equal value of another type never matches (pass a typed filter value)"}
	}
	bv, err := t.core.beacon(nil, name, vedm, v)
	if err != nil {
		return filter.Expr{}, false, &FilterError{Property: name, Reason: err.Error()}
	}
	return filter.Compare(BeaconPrefix+name, c.Op, filter.Binary(bv)), true, nil
}

type literalError string

func (e literalError) Error() string { return string(e) }

// literalValue reads a filter value back into its EDM type and canonical
// Go value, the form a beacon is computed from.
func literalValue(v filter.Value) (entity.EDMType, any, error) {
	lit, err := v.Literal()
	if err != nil {
		return 0, nil, err
	}
	bad := literalError("unreadable " + v.EDMType() + " literal")
	quoted := func(prefix string) (string, bool) {
		if len(lit) < len(prefix)+2 || !strings.HasPrefix(lit, prefix+"'") || lit[len(lit)-1] != '\'' {
			return "", false
		}
		return lit[len(prefix)+1 : len(lit)-1], true
	}
	switch v.EDMType() {
	case "Edm.String":
		s, ok := quoted("")
		if !ok {
			return 0, nil, bad
		}
		return entity.EDMString, strings.ReplaceAll(s, "''", "'"), nil
	case "Edm.Int32":
		n, err := strconv.ParseInt(lit, 10, 32)
		if err != nil {
			return 0, nil, bad
		}
		return entity.EDMInt32, int32(n), nil
	case "Edm.Int64":
		n, err := strconv.ParseInt(strings.TrimSuffix(lit, "L"), 10, 64)
		if err != nil || !strings.HasSuffix(lit, "L") {
			return 0, nil, bad
		}
		return entity.EDMInt64, n, nil
	case "Edm.Double":
		x, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			return 0, nil, bad
		}
		return entity.EDMDouble, x, nil
	case "Edm.Boolean":
		return entity.EDMBoolean, lit == "true", nil
	case "Edm.DateTime":
		s, ok := quoted("datetime")
		if !ok {
			return 0, nil, bad
		}
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, nil, bad
		}
		return entity.EDMDateTime, tm.UTC(), nil
	case "Edm.Guid":
		s, ok := quoted("guid")
		if !ok {
			return 0, nil, bad
		}
		g, err := uuid.Parse(s)
		if err != nil {
			return 0, nil, bad
		}
		return entity.EDMGuid, g, nil
	case "Edm.Binary":
		s, ok := quoted("X")
		if !ok {
			return 0, nil, bad
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			return 0, nil, bad
		}
		return entity.EDMBinary, b, nil
	}
	return 0, nil, bad
}
