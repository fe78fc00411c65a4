package argerr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestKeys pins the one text of keys in tablekit's errors: a partition
// alone, an entity, an entity whose RowKey is empty, and keys too long to
// print whole, cut on a rune boundary.
func TestKeys(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes: cut after 32 runes
	for _, c := range []struct{ got, want string }{
		{Keys("p", ""), `PartitionKey "p"`},
		{Keys("p", "r"), `PartitionKey "p", RowKey "r"`},
		{Keys("", "r"), `PartitionKey "", RowKey "r"`},
		{Keys("O'Brien", `a"b`), `PartitionKey "O'Brien", RowKey "a\"b"`},
		{EntityKeys("p", ""), `PartitionKey "p", RowKey ""`},
		{EntityKeys("p", "r"), Keys("p", "r")},
		{Keys(long, ""), `PartitionKey "` + strings.Repeat("é", 32) + `"…`},
		{Quote(strings.Repeat("x", 64)), `"` + strings.Repeat("x", 64) + `"`},
		{Quote("x" + long), `"x` + strings.Repeat("é", 31) + `"…`},
		{Quote("\x01"), `"\x01"`},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
		if !utf8.ValidString(c.got) {
			t.Errorf("%q is not valid UTF-8", c.got)
		}
	}
}
