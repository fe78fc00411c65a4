package logtail_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// csharp holds instants and the guide's C# formula for them,
// (DateTime.MaxValue.Ticks - t.Ticks).ToString("D19"), worked out by hand:
// DateTime.MaxValue.Ticks is 3155378975999999999, 1970-01-01 is tick
// 621355968000000000 (.NET's DateTime.UnixEpoch.Ticks), 2014-07-31T18:00 is
// tick 635424264000000000 (the guide's storage-log hour).
var csharp = []struct {
	at   time.Time
	want string
}{
	{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), "3155378975999999999"},
	{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), "2534023007999999999"},
	{time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC), "2519954711999999999"},
	{time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), "2524556159999999999"},
	{time.Date(9999, 12, 31, 23, 59, 59, 999_999_900, time.UTC), "0000000000000000000"},
}

func TestParseKey(t *testing.T) {
	for _, c := range csharp {
		k, err := logtail.ParseKey(c.want)
		if err != nil || !k.Time.Equal(c.at) || k.Seq != 0 || k.Writer != "" {
			t.Errorf("ParseKey(%q) = %+v, %v; want %v", c.want, k, err, c.at)
		}
		seqKey := keys.InvertedTicksSeq(c.at, 7) + "_w-1"
		k, err = logtail.ParseKey(seqKey)
		if err != nil || !k.Time.Equal(c.at) || k.Seq != 7 || k.Writer != "w-1" {
			t.Errorf("ParseKey(%q) = %+v, %v", seqKey, k, err)
		}
		if !strings.HasPrefix(seqKey, c.want+"_") {
			t.Errorf("sequenced key %q does not start with the C# key %q", seqKey, c.want)
		}
	}
	bad := []string{
		"",
		"315537897599999999",                 // 18 digits
		"3155378976000000000",                // above DateTime.MaxValue.Ticks
		"25199547119999999x9",                // not a digit
		"2519954711999999999_4294967295",     // sequenced, no writer
		"2519954711999999999_4294967295_",    // empty writer
		"2519954711999999999_4294967295_a_b", // '_' in the writer
		"2519954711999999999_4294967296_a",   // sequence beyond uint32
		"2519954711999999999-4294967295_a",   // wrong separator
		"2519954711999999999_4294967295_" + strings.Repeat("w", logtail.MaxWriterIDLength+1),
		"2519954711999999999_4294967295_é",
	}
	for _, s := range bad {
		_, err := logtail.ParseKey(s)
		var ae *logtail.ArgError
		if !errors.As(err, &ae) || !errors.Is(err, logtail.ErrInvalid) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("ParseKey(%q) = %v; want an *ArgError matching ErrInvalid", s, err)
		}
	}
}
