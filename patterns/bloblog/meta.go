package bloblog

import (
	"strings"
	"time"
)

// Metadata of a log blob. Keys are lower case; the service keeps their
// case, but HTTP header parsing (Get Blob Properties) capitalises them, so
// they are read without regard to case.
const (
	metaFormat = "bloblogformat" // FormatVersion
	metaWriter = "bloblogwriter" // the Logger that created the blob
	metaMin    = "mintime"       // earliest record time, in the record format
	metaMax    = "maxtime"       // latest record time
)

// blobMeta is what a log blob's metadata says.
type blobMeta struct {
	format, writer string
	min, max       time.Time
	hasRange       bool // min and max are set
}

func (m blobMeta) encode() map[string]*string {
	out := map[string]*string{metaFormat: ptr(FormatVersion), metaWriter: ptr(m.writer)}
	if m.hasRange {
		out[metaMin] = ptr(m.min.UTC().Format(timeLayout))
		out[metaMax] = ptr(m.max.UTC().Format(timeLayout))
	}
	return out
}

func ptr(s string) *string { return &s }

// parseMeta reads a blob's metadata. A range is only reported when both
// ends parse and min is not after max; anything else means the range is
// unknown and the blob must be read to know its records' times.
func parseMeta(md map[string]*string) blobMeta {
	var m blobMeta
	var minS, maxS string
	for k, v := range md {
		if v == nil {
			continue
		}
		switch strings.ToLower(k) {
		case metaFormat:
			m.format = *v
		case metaWriter:
			m.writer = *v
		case metaMin:
			minS = *v
		case metaMax:
			maxS = *v
		}
	}
	lo, err1 := time.Parse(timeLayout, minS)
	hi, err2 := time.Parse(timeLayout, maxS)
	if err1 == nil && err2 == nil && !lo.After(hi) {
		m.min, m.max, m.hasRange = lo, hi, true
	}
	return m
}

// widen returns m's range extended to cover [lo, hi].
func (m blobMeta) widen(lo, hi time.Time) blobMeta {
	if !m.hasRange {
		m.min, m.max, m.hasRange = lo, hi, true
		return m
	}
	if lo.Before(m.min) {
		m.min = lo
	}
	if hi.After(m.max) {
		m.max = hi
	}
	return m
}

// covers reports whether m's range includes [lo, hi].
func (m blobMeta) covers(lo, hi time.Time) bool {
	return m.hasRange && !lo.Before(m.min) && !hi.After(m.max)
}

// overlaps reports whether the blob may hold records in [from, to): its
// range meets it, or its range is unknown.
func (m blobMeta) overlaps(from, to time.Time) bool {
	return !m.hasRange || (m.min.Before(to) && !m.max.Before(from))
}
