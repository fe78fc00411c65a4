package keys

import (
	"iter"
)

// FNV-1a 64-bit parameters.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// Bucket returns the bucket of value among n buckets, for spreading writes
// that would otherwise all go to one partition (design guide §6.12, the
// prepend/append anti-pattern): use it as, or in front of, the
// PartitionKey, and read with one query per bucket (Buckets).
//
// The bucket number is
//
//	h = FNV-1a 64-bit hash of the UTF-8 bytes of value
//	h = fmix64(h)   (MurmurHash3's finaliser: h ^= h>>33; h *= 0xff51afd7ed558ccd;
//	                 h ^= h>>33; h *= 0xc4ceb9fe1a85ec53; h ^= h>>33, all mod 2^64)
//	bucket = h mod n
//
// written in decimal, zero-padded to the number of digits of n-1, so the
// ids of one n all have the same width ("0".."9" for n = 10, "00".."99" for
// n = 100). The finaliser matters: FNV-1a alone is not uniform for short,
// similar values (its low k bits depend only on the low k bits of each
// byte, and its high bits hardly on the last bytes), so sequential ids such
// as "user000123" would crowd into a few buckets. The function is fixed:
// the same value and n give the same bucket on every machine and in every
// release, so it is safe to store, and it is easy to reproduce in other
// languages.
//
// n < 1 is treated as 1 (every value in bucket "0"); BucketChecked returns
// an error instead. Changing n moves most values to other buckets.
func Bucket(value string, n int) string {
	n = max(n, 1)
	b := bucketOf(value, n)
	w := digitCount(uint64(n - 1))
	if w == 1 {
		return digitStrings[b : b+1]
	}
	var buf [20]byte
	return string(appendPadUint(buf[:0], b, w))
}

const digitStrings = "0123456789"

// bucketOf returns the bucket number of value among n >= 1 buckets.
func bucketOf(value string, n int) uint64 {
	h := uint64(fnvOffset64)
	for i := 0; i < len(value); i++ {
		h ^= uint64(value[i])
		h *= fnvPrime64
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h % uint64(n)
}

// BucketChecked is Bucket with an error (a *KeyError with RuleBucketCount)
// when n < 1.
func BucketChecked(value string, n int) (string, error) {
	if n < 1 {
		e := newErr("BucketChecked", RuleBucketCount, value)
		e.Got = n
		return "", e
	}
	return Bucket(value, n), nil
}

// Buckets yields the n bucket ids Bucket(·, n) can return, in ascending
// order, for fan-out reads that query every bucket:
//
//	for b := range keys.Buckets(16) {
//		// query PartitionKey eq prefix + b
//	}
//
// Use slices.Collect(keys.Buckets(n)) for a slice. n < 1 is treated as 1,
// as in Bucket.
func Buckets(n int) iter.Seq[string] {
	n = max(n, 1)
	w := digitCount(uint64(n - 1))
	return func(yield func(string) bool) {
		var buf [20]byte
		for i := range n {
			var id string
			if w == 1 {
				id = digitStrings[i : i+1]
			} else {
				id = string(appendPadUint(buf[:0], uint64(i), w))
			}
			if !yield(id) {
				return
			}
		}
	}
}
