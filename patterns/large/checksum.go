package large

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"hash/crc32"
	"strconv"
)

// Checksum is how a value is checked when it is read back: the entity
// records the value's checksum beside its size, and a read compares the
// blob's bytes with both.
type Checksum uint8

const (
	// ChecksumSHA256 records the value's SHA-256: a blob that differs from
	// the value written is found, whoever changed it — storage, a bug, or
	// someone with write access to the container who wants a tampered
	// value taken for the right one. The default.
	ChecksumSHA256 Checksum = iota
	// ChecksumCRC32C records the value's CRC-32C (Castagnoli), which the
	// CPU computes with its CRC32 instruction at several GB/s, a tenth of
	// SHA-256's cost: it finds a blob that storage lost, truncated or
	// corrupted, or that is not the one the entity names (a mix-up), but
	// not a change made on purpose, since anyone can make a value with a
	// given CRC-32C. For values whose threat is corruption, not tampering.
	ChecksumCRC32C
)

// String returns the checksum's name as the wire format spells it.
func (c Checksum) String() string {
	switch c {
	case ChecksumSHA256:
		return "sha256"
	case ChecksumCRC32C:
		return "crc32c"
	}
	return "Checksum(" + strconv.Itoa(int(c)) + ")"
}

func (c Checksum) valid() bool { return c == ChecksumSHA256 || c == ChecksumCRC32C }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// newHash returns a hash computing c.
func (c Checksum) newHash() hash.Hash {
	if c == ChecksumCRC32C {
		return crc32.New(castagnoli)
	}
	return sha256.New()
}

// sumRef returns the reference to blob name holding data, checked by c.
func sumRef(name string, c Checksum, data []byte) Ref {
	r := Ref{Blob: name, Size: int64(len(data)), Checksum: c}
	if c == ChecksumCRC32C {
		r.CRC32C = crc32.Checksum(data, castagnoli)
	} else {
		r.SHA256 = sha256.Sum256(data)
	}
	return r
}

// withSum returns r with the checksum that h, made by r.Checksum's
// newHash, computed.
func (r Ref) withSum(h hash.Hash) Ref {
	var s [sha256.Size]byte
	b := h.Sum(s[:0])
	if r.Checksum == ChecksumCRC32C {
		r.CRC32C = binary.BigEndian.Uint32(b)
	} else {
		r.SHA256 = s
	}
	return r
}

// sameSum reports whether a and b record one checksum of one size.
func sameSum(a, b Ref) bool {
	return a.Size == b.Size && a.Checksum == b.Checksum && a.SHA256 == b.SHA256 && a.CRC32C == b.CRC32C
}
