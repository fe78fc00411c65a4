package wide

import (
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// MaxRows is the most rows of properties one logical entity spans. With its
// head row it is 100 entities, the most one transaction may write or delete.
const MaxRows = 99

// rowKey is the RowKey of row k of the logical entity id: keys.Compound(id,
// "00") for the head, "01" to "99" for the rows of properties. The rows of
// one id sort together, in order, and apart from every other id.
func rowKey(id string, k int) string { return keys.Compound(id, keys.Pad(int64(k), 2)) }

// rowRange is the RowKey range that holds the rows of id, from the head to
// past row 99.
func rowRange(id string) (from, to string) {
	from, _ = keys.CompoundPrefix(id, keys.Pad(0, 2))
	_, to = keys.CompoundPrefix(id, keys.Pad(MaxRows, 2))
	return from, to
}

// rowIndex returns k when rk is rowKey(id, k) for some k in 0..MaxRows.
func rowIndex(id, rk string) (int, bool) {
	parts, err := keys.SplitCompound(rk)
	if err != nil || len(parts) != 2 || parts[0] != id || len(parts[1]) != 2 {
		return 0, false
	}
	d0, d1 := parts[1][0], parts[1][1]
	if d0 < '0' || d0 > '9' || d1 < '0' || d1 > '9' {
		return 0, false
	}
	return int(d0-'0')*10 + int(d1-'0'), true
}

// The service's size formula (design guide §1): 4 bytes, plus twice the
// UTF-16 length of the keys, plus, per property, 8 bytes, twice the UTF-16
// length of the name and the value's size.
func keysSize(pk, rk string) int { return 4 + 2*(keys.UTF16Len(pk)+keys.UTF16Len(rk)) }

func propSize(name string, v any) int { return 8 + 2*keys.UTF16Len(name) + valueSize(v) }

// valueSize is the size of a value of one of entity.DynamicEntity's
// canonical types by the service's formula.
func valueSize(v any) int {
	switch x := v.(type) {
	case string:
		return 4 + 2*keys.UTF16Len(x)
	case []byte:
		return 4 + len(x)
	case int32:
		return 4
	case bool:
		return 1
	case uuid.UUID:
		return 16
	case int64, float64, time.Time:
		return 8
	}
	return 8
}

// rowCapacity is what a row of properties holds besides its version.
func rowCapacity(pk, id string) (props, size int) {
	return entity.MaxUserProperties - 1,
		entity.MaxEntitySize - keysSize(pk, rowKey(id, MaxRows)) - propSize(propVersion, newToken())
}

// assign places the properties of a logical entity in rows. Property name
// goes to row 1 + keys.Bucket(name, n), for the smallest n at which every
// row keeps within the service's limits of 252 properties and 1 MiB, its
// version included: the result depends on the names and sizes alone, so
// the same entity always gets the same rows, and a change of some values
// that leaves n as it was changes only the rows that hold them.
//
// Hashing leaves rows unevenly full. When it needs more than twice the
// rows the properties fill (or more than MaxRows), the names are packed in
// order instead, each row filled before the next: as deterministic, and
// as tight as rows can be, but a change may move every later property.
//
// Each row's names are sorted. ok is false when more than MaxRows rows
// would be needed. An entity without properties has no rows (its head
// alone).
func assign(pk, id string, props map[string]any) (rows [][]string, ok bool) {
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	sizes := make([]int, len(names))
	total := 0
	for i, name := range names {
		sizes[i] = propSize(name, props[name])
		total += sizes[i]
	}
	if len(names) == 0 {
		return nil, true
	}
	capProps, capSize := rowCapacity(pk, id)
	least := max(ceilDiv(len(names), capProps), ceilDiv(total, capSize))
	bucket := make([]int, len(names))
	for n := least; n <= min(MaxRows, 2*least+2); n++ {
		if fits(n, names, sizes, bucket, capProps, capSize) {
			return place(n, names, bucket), true
		}
	}
	n := pack(names, sizes, bucket, capProps, capSize)
	if n > MaxRows {
		return nil, false
	}
	return place(n, names, bucket), true
}

// place lists the names of each of n rows from their buckets.
func place(n int, names []string, bucket []int) [][]string {
	rows := make([][]string, n)
	for i, name := range names {
		rows[bucket[i]] = append(rows[bucket[i]], name)
	}
	return rows
}

// pack fills rows in order and returns how many it used.
func pack(names []string, sizes, bucket []int, capProps, capSize int) int {
	k, count, size := 0, 0, 0
	for i := range names {
		if count+1 > capProps || size+sizes[i] > capSize {
			k, count, size = k+1, 0, 0
		}
		bucket[i] = k
		count++
		size += sizes[i]
	}
	return k + 1
}

// fits puts every name in its bucket of n and reports whether every row
// keeps within the capacity.
func fits(n int, names []string, sizes, bucket []int, capProps, capSize int) bool {
	count := make([]int, n)
	size := make([]int, n)
	for i, name := range names {
		b := 0
		if n > 1 {
			b, _ = strconv.Atoi(keys.Bucket(name, n))
		}
		bucket[i] = b
		count[b]++
		size[b] += sizes[i]
		if count[b] > capProps || size[b] > capSize {
			return false
		}
	}
	return true
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
