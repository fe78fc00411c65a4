package entity

import (
	"bytes"
	"time"
)

// SameContent reports whether d and o hold the same keys and the same
// properties with the same values and EDM types, compared by their
// encoding (so a NaN equals a NaN, and an Int32 7 is not an Int64 7). ETag
// and Timestamp, which the service sets, are not compared. A value that
// does not encode makes it false. It is the one comparison by which
// tablekit tells "the stored entity is already what I meant to write"
// (backup's Insert-mode import, resolver's migration after a lost reply).
func (d DynamicEntity) SameContent(o DynamicEntity) bool {
	d.ETag, d.Timestamp, o.ETag, o.Timestamp = "", time.Time{}, "", time.Time{}
	a, err1 := Marshal(&d)
	b, err2 := Marshal(&o)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}
