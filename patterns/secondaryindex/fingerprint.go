package secondaryindex

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
)

// fingerprint hashes the properties an entry holds (or should hold): the
// named properties of props, and the primary's keys. Numbers are hashed by
// value, as sameValue compares them, so that a whole-number Double the
// service returned as an integer hashes like the Double.
func fingerprint(props map[string]any, names []string, pk, rk string) uint64 {
	h := fnv.New64a()
	var buf [16]byte
	put := func(name string, v any) {
		_, _ = h.Write([]byte(name))
		buf[0] = 0
		switch x := v.(type) {
		case string:
			buf[1] = 's'
			_, _ = h.Write(buf[:2])
			_, _ = h.Write([]byte(x))
		case bool:
			buf[1] = 'b'
			buf[2] = 0
			if x {
				buf[2] = 1
			}
			_, _ = h.Write(buf[:3])
		case int32:
			putNumber(h, buf[:], float64(x), int64(x), true)
		case int64:
			putNumber(h, buf[:], float64(x), x, true)
		case float64:
			putNumber(h, buf[:], x, int64(x), x == math.Trunc(x) && math.Abs(x) < 1<<62)
		case time.Time:
			buf[1] = 't'
			binary.LittleEndian.PutUint64(buf[2:10], uint64(x.UnixNano()))
			_, _ = h.Write(buf[:10])
		case uuid.UUID:
			buf[1] = 'g'
			_, _ = h.Write(buf[:2])
			_, _ = h.Write(x[:])
		case []byte:
			buf[1] = 'x'
			_, _ = h.Write(buf[:2])
			_, _ = h.Write(x)
		default:
			buf[1] = '?'
			_, _ = h.Write(buf[:2])
		}
		buf[0] = 0xff // ends the value: no two lists of values hash alike by shifting bytes
		_, _ = h.Write(buf[:1])
	}
	all := make([]string, 0, len(names)+2)
	all = append(all, names...)
	all = append(all, PropPrimaryPK, PropPrimaryRK)
	slices.Sort(all)
	for _, n := range all {
		switch n {
		case PropPrimaryPK:
			put(n, pk)
		case PropPrimaryRK:
			put(n, rk)
		default:
			put(n, props[n])
		}
	}
	return h.Sum64()
}

func putNumber(h interface{ Write([]byte) (int, error) }, buf []byte, f float64, i int64, whole bool) {
	if whole {
		buf[1] = 'i'
		binary.LittleEndian.PutUint64(buf[2:10], uint64(i))
	} else {
		buf[1] = 'f'
		binary.LittleEndian.PutUint64(buf[2:10], math.Float64bits(f))
	}
	_, _ = h.Write(buf[:10])
}

// copiedNames lists the properties of props that ix's entries copy, for
// fingerprint.
func (ix *index[T]) copiedNames(props map[string]any, dst []string) []string {
	dst = dst[:0]
	if ix.props == nil {
		for k := range props {
			if !reserved(k) {
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
