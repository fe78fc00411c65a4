package large

import (
	"testing"
	"time"
)

// TestAgeFromLastModification: a disposal's wait counts from the blob's
// last modification, which its Delete's If-Unmodified-Since tests, not
// from its creation: a blob whose metadata was set after its upload would
// otherwise be retried every second until it is old enough.
func TestAgeFromLastModification(t *testing.T) {
	created := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	modified := created.Add(90 * time.Second)
	for _, c := range []struct {
		created, modified, want *time.Time
	}{
		{&created, &modified, &modified},
		{&modified, &created, &modified}, // clocks that disagree: the later
		{&created, nil, &created},
		{nil, &modified, &modified},
		{nil, nil, nil},
	} {
		got := ageFrom(c.created, c.modified)
		if (got == nil) != (c.want == nil) || got != nil && !got.Equal(*c.want) {
			t.Errorf("ageFrom(%v, %v) = %v, want %v", c.created, c.modified, got, c.want)
		}
	}
}
