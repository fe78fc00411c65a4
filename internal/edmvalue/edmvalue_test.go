package edmvalue

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestEqual(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	id := uuid.MustParse("c9da6455-213d-42c9-9a79-3e9149a57833")
	cases := []struct {
		a, b any
		want bool
	}{
		{at, at.In(time.FixedZone("x", 3600)), true},
		{at, at.Add(time.Nanosecond * 100), false},
		{at, "2024-05-01T12:00:00Z", false},
		{[]byte("ab"), []byte("ab"), true},
		{[]byte("ab"), []byte("ac"), false},
		{[]byte("ab"), "ab", false},
		{id, id, true},
		{id, uuid.Nil, false},
		{id, id.String(), false},
		{2.0, int32(2), true},
		{int32(2), 2.0, true},
		{2.0, int64(2), true},
		{int64(2), 2.0, true},
		{2.5, int32(2), false},
		{int64(3), 2.0, false},
		{2.0, "2", false},
		{int32(2), int64(2), false},
		{"a", "a", true},
		{true, false, false},
		{nil, nil, true},
	}
	for _, c := range cases {
		if got := Equal(c.a, c.b); got != c.want {
			t.Errorf("Equal(%#v, %#v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
