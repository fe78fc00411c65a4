package logtail_test

import (
	"testing"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// FuzzParseKey: ParseKey never panics, and a key it accepts is exactly the
// key its parts make again, so no two readings of one key exist.
func FuzzParseKey(f *testing.F) {
	f.Add("2519954711999999999")
	f.Add("2519954711999999999_4294967288_w-1")
	f.Add("0000000000000000000_0000000000_" + "abcdefghijklmnopqrstuvwxyz012345")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := logtail.ParseKey(s)
		if err != nil {
			return
		}
		again := keys.InvertedTicks(k.Time)
		if k.Writer != "" {
			again = keys.InvertedTicksSeq(k.Time, k.Seq) + "_" + k.Writer
		}
		if again != s {
			t.Fatalf("ParseKey(%q) = %+v, which makes %q", s, k, again)
		}
	})
}
