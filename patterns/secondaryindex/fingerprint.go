package secondaryindex

import (
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
)

// fingerprint hashes the properties an entry holds (or should hold): the
// named properties of props, and the primary's keys. Numbers are hashed by
// value, as edmvalue.Equal compares them, so that a whole-number Double the
// service returned as an integer hashes like the Double. names is sorted
// in place.
func fingerprint(props map[string]any, names []string, pk, rk string) uint64 {
	h := uint64(fnvStart)
	put := func(name string, v any) {
		h = fnvString(h, name)
		switch x := v.(type) {
		case string:
			h = fnvString(fnvByte(h, 's'), x)
		case bool:
			h = fnvByte(h, 'b')
			if x {
				h = fnvByte(h, 1)
			}
		case int32:
			h = fnvNumber(h, float64(x), int64(x), true)
		case int64:
			h = fnvNumber(h, float64(x), x, true)
		case float64:
			h = fnvNumber(h, x, int64(x), x == math.Trunc(x) && math.Abs(x) < 1<<62)
		case time.Time:
			h = fnvUint(fnvByte(h, 't'), uint64(x.UnixNano()))
		case uuid.UUID:
			h = fnvBytes(fnvByte(h, 'g'), x[:])
		case []byte:
			h = fnvBytes(fnvByte(h, 'x'), x)
		default:
			h = fnvByte(h, '?')
		}
		// A separator no string holds ends the value, so that no two lists
		// of values hash alike by shifting bytes from one to the next.
		h = fnvByte(h, 0xff)
	}
	names = append(names, PropPrimaryPK, PropPrimaryRK)
	slices.Sort(names)
	for _, n := range names {
		switch n {
		case PropPrimaryPK:
			put(n, pk)
		case PropPrimaryRK:
			put(n, rk)
		default:
			put(n, props[n])
		}
	}
	return h
}

// FNV-1a, 64 bits, without allocating a hash.Hash.
const (
	fnvStart uint64 = 14695981039346656037
	fnvPrime uint64 = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = fnvByte(h, s[i])
	}
	return fnvByte(h, 0xfe) // strings end, so "ab"+"c" differs from "a"+"bc"
}

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = fnvByte(h, c)
	}
	return fnvByte(h, 0xfe)
}

func fnvUint(h, v uint64) uint64 {
	for range 8 {
		h = fnvByte(h, byte(v))
		v >>= 8
	}
	return h
}

func fnvNumber(h uint64, f float64, i int64, whole bool) uint64 {
	if whole {
		return fnvUint(fnvByte(h, 'i'), uint64(i))
	}
	return fnvUint(fnvByte(h, 'f'), math.Float64bits(f))
}

// copiedNames lists the properties of props that ix's entries copy, for
// fingerprint.
func (ix *index[T]) copiedNames(props map[string]any, dst []string) []string {
	dst = dst[:0]
	if ix.props == nil {
		for k := range props {
			if ix.copied(k) {
				dst = append(dst, k)
			}
		}
		return dst
	}
	for _, k := range ix.props {
		if _, ok := props[k]; ok {
			dst = append(dst, k)
		}
	}
	return dst
}

// entryNames lists the properties of an entry that fingerprint covers:
// all but its claim, write token and the primary's keys (which
// fingerprint adds itself).
func entryNames(props map[string]any, dst []string) []string {
	dst = dst[:0]
	for k := range props {
		if !reserved(k) {
			dst = append(dst, k)
		}
	}
	return dst
}
