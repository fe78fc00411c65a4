package keys_test

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/keys"
)

func TestTicks(t *testing.T) {
	utc := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	tokyo := time.FixedZone("JST", 9*3600)
	west := time.FixedZone("PDT", -7*3600)
	const want = 635424264000000000
	for _, tm := range []time.Time{utc, utc.In(tokyo), utc.In(west), utc.Local()} {
		if got := keys.Ticks(tm); got != want {
			t.Errorf("Ticks(%v) = %d, want %d (the instant counts, not the zone)", tm, got, want)
		}
	}
	tests := []struct {
		t    time.Time
		want int64
	}{
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{time.Date(1, 1, 1, 0, 0, 0, 100, time.UTC), 1},
		{time.Date(1, 1, 1, 0, 0, 0, 99, time.UTC), 0}, // below a tick: dropped
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), 621355968000000000},
		{time.Date(1969, 12, 31, 23, 59, 59, 999999900, time.UTC), 621355967999999999},
		{time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), 630822816000000000},
		{time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC), keys.MaxTicks},
		// Outside DateTime: clamped.
		{time.Date(0, 12, 31, 23, 59, 59, 0, time.UTC), 0},
		{time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), keys.MaxTicks},
		{time.Unix(math.MaxInt64/2, 0), keys.MaxTicks},
		{time.Unix(math.MinInt64/2, 0), 0},
		{time.Time{}, 0}, // Go's zero time is 0001-01-01 UTC, DateTime.MinValue
	}
	for _, tt := range tests {
		if got := keys.Ticks(tt.t); got != tt.want {
			t.Errorf("Ticks(%v) = %d, want %d", tt.t, got, tt.want)
		}
	}
}

func TestFromTicks(t *testing.T) {
	r := newRand(3)
	for range 20000 {
		ticks := r.Int64N(keys.MaxTicks + 1)
		tm := keys.FromTicks(ticks)
		if tm.Location() != time.UTC {
			t.Fatalf("FromTicks(%d) is in %v", ticks, tm.Location())
		}
		if back := keys.Ticks(tm); back != ticks {
			t.Fatalf("Ticks(FromTicks(%d)) = %d", ticks, back)
		}
	}
	if got := keys.FromTicks(-5); !got.Equal(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("FromTicks(-5) = %v", got)
	}
	if got := keys.FromTicks(math.MaxInt64); !got.Equal(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)) {
		t.Errorf("FromTicks(MaxInt64) = %v", got)
	}
}

// Property: a later instant (a later tick) gives a smaller inverted key and
// a larger forward key, both 19 digits, both parsing back to the tick.
func TestTimeKeyOrder(t *testing.T) {
	r := newRand(4)
	for range 20000 {
		a := r.Int64N(keys.MaxTicks + 1)
		b := a + r.Int64N(3) - 1
		if r.IntN(2) == 0 {
			b = r.Int64N(keys.MaxTicks + 1)
		}
		b = max(0, min(b, keys.MaxTicks))
		ta, tb := keys.FromTicks(a), keys.FromTicks(b)
		ia, ib := keys.InvertedTicks(ta), keys.InvertedTicks(tb)
		fa, fb := keys.TicksKey(ta), keys.TicksKey(tb)
		if len(ia) != 19 || len(fa) != 19 {
			t.Fatalf("lengths %q %q", ia, fa)
		}
		if (a < b) != (ia > ib) || (a == b) != (ia == ib) {
			t.Fatalf("inverted order: ticks %d, %d gave %q, %q", a, b, ia, ib)
		}
		if (a < b) != (fa < fb) || (a == b) != (fa == fb) {
			t.Fatalf("forward order: ticks %d, %d gave %q, %q", a, b, fa, fb)
		}
		if back, err := keys.ParseInvertedTicks(ia); err != nil || !back.Equal(ta) {
			t.Fatalf("ParseInvertedTicks(%q) = %v, %v; want %v", ia, back, err, ta)
		}
		if back, err := keys.ParseTicksKey(fa); err != nil || !back.Equal(ta) {
			t.Fatalf("ParseTicksKey(%q) = %v, %v; want %v", fa, back, err, ta)
		}
	}
	now := time.Now()
	if got, want := string(keys.AppendInvertedTicks([]byte("x"), now)), "x"+keys.InvertedTicks(now); got != want {
		t.Errorf("AppendInvertedTicks = %q, want %q", got, want)
	}
}

func TestParseTicksErrors(t *testing.T) {
	bad := []string{
		"",
		"251995471199999999",    // 18 digits
		"25199547119999999990",  // 20
		"3155378976000000000",   // MaxTicks + 1
		"9999999999999999999",   // far above
		"251995471199999999a",   // letter
		"-251995471199999999",   // sign
		" 251995471199999999",   // space
		"２５１９９５４７１１９９",          // full-width digits
		"2519954711999999999\n", // trailing newline
	}
	for _, s := range bad {
		for name, parse := range map[string]func(string) (time.Time, error){
			"ParseInvertedTicks": keys.ParseInvertedTicks,
			"ParseTicksKey":      keys.ParseTicksKey,
		} {
			tm, err := parse(s)
			var ke *keys.KeyError
			if !errors.As(err, &ke) || ke.Rule != keys.RuleSyntax || ke.Func != name || !tm.IsZero() {
				t.Errorf("%s(%q) = %v, %v; want a syntax error", name, s, tm, err)
			}
		}
	}
	// A non-digit is located.
	_, err := keys.ParseInvertedTicks("25199547119x9999999")
	var ke *keys.KeyError
	if !errors.As(err, &ke) || ke.Pos != 11 || ke.Char != 'x' {
		t.Errorf("error does not locate the letter: %v", err)
	}
	// The extremes are accepted.
	if tm, err := keys.ParseInvertedTicks("0000000000000000000"); err != nil || keys.Ticks(tm) != keys.MaxTicks {
		t.Errorf("ParseInvertedTicks(0…0) = %v, %v", tm, err)
	}
	if tm, err := keys.ParseInvertedTicks("3155378975999999999"); err != nil || keys.Ticks(tm) != 0 {
		t.Errorf("ParseInvertedTicks(MaxTicks) = %v, %v", tm, err)
	}
}

func TestTimeKeysChecked(t *testing.T) {
	in := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	if got, err := keys.InvertedTicksChecked(in); got != "2519954711999999999" || err != nil {
		t.Errorf("InvertedTicksChecked = %q, %v", got, err)
	}
	if got, err := keys.TicksKeyChecked(in); got != "0635424264000000000" || err != nil {
		t.Errorf("TicksKeyChecked = %q, %v", got, err)
	}
	for _, out := range []time.Time{
		time.Date(0, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		for name, f := range map[string]func(time.Time) (string, error){
			"InvertedTicksChecked": keys.InvertedTicksChecked,
			"TicksKeyChecked":      keys.TicksKeyChecked,
		} {
			got, err := f(out)
			var ke *keys.KeyError
			if got != "" || !errors.As(err, &ke) || ke.Rule != keys.RuleTimeRange || !errors.Is(err, keys.ErrInvalidKey) {
				t.Errorf("%s(%v) = %q, %v; want a time range error", name, out, got, err)
			}
		}
	}
	// The last and first instants of DateTime are in range.
	for _, in := range []time.Time{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)} {
		if _, err := keys.InvertedTicksChecked(in); err != nil {
			t.Errorf("InvertedTicksChecked(%v): %v", in, err)
		}
	}
}

func TestSeqKeys(t *testing.T) {
	tm := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	if got, want := keys.InvertedTicksSeq(tm, 0), "2519954711999999999_4294967295"; got != want {
		t.Errorf("InvertedTicksSeq(t, 0) = %q, want %q", got, want)
	}
	if got, want := keys.InvertedTicksSeq(tm, 7), "2519954711999999999_4294967288"; got != want {
		t.Errorf("InvertedTicksSeq(t, 7) = %q, want %q", got, want)
	}
	if got, want := keys.TicksKeySeq(tm, 7), "0635424264000000000_0000000007"; got != want {
		t.Errorf("TicksKeySeq(t, 7) = %q, want %q", got, want)
	}

	// Property: keys order by (tick, seq), newest first for the inverted
	// form, and parse back.
	r := newRand(5)
	for range 20000 {
		a, b := r.Int64N(keys.MaxTicks+1), r.Int64N(keys.MaxTicks+1)
		if r.IntN(2) == 0 {
			b = a
		}
		sa, sb := r.Uint32(), r.Uint32()
		if r.IntN(4) == 0 {
			sa, sb = uint32(r.IntN(3)), uint32(r.IntN(3))
		}
		ta, tb := keys.FromTicks(a), keys.FromTicks(b)
		less := a < b || a == b && sa < sb
		same := a == b && sa == sb
		ia, ib := keys.InvertedTicksSeq(ta, sa), keys.InvertedTicksSeq(tb, sb)
		fa, fb := keys.TicksKeySeq(ta, sa), keys.TicksKeySeq(tb, sb)
		if len(ia) != 30 || len(fa) != 30 {
			t.Fatalf("lengths %q %q", ia, fa)
		}
		if less != (ia > ib) || same != (ia == ib) {
			t.Fatalf("inverted: (%d,%d) (%d,%d) gave %q %q", a, sa, b, sb, ia, ib)
		}
		if less != (fa < fb) || same != (fa == fb) {
			t.Fatalf("forward: (%d,%d) (%d,%d) gave %q %q", a, sa, b, sb, fa, fb)
		}
		// The time part interleaves with plain keys.
		if !strings.HasPrefix(ia, keys.InvertedTicks(ta)+"_") || !strings.HasPrefix(fa, keys.TicksKey(ta)+"_") {
			t.Fatalf("time part of %q / %q", ia, fa)
		}
		if bt, bs, err := keys.ParseInvertedTicksSeq(ia); err != nil || !bt.Equal(ta) || bs != sa {
			t.Fatalf("ParseInvertedTicksSeq(%q) = %v, %d, %v", ia, bt, bs, err)
		}
		if bt, bs, err := keys.ParseTicksKeySeq(fa); err != nil || !bt.Equal(ta) || bs != sa {
			t.Fatalf("ParseTicksKeySeq(%q) = %v, %d, %v", fa, bt, bs, err)
		}
	}

	for _, s := range []string{
		"",
		"2519954711999999999",
		"2519954711999999999_",
		"2519954711999999999-4294967295",
		"2519954711999999999_4294967296", // seq > MaxUint32
		"2519954711999999999_429496729x",
		"3155378976000000000_0000000000", // ticks > MaxTicks
		"2519954711999999999_00000000000",
	} {
		if _, _, err := keys.ParseInvertedTicksSeq(s); !errors.Is(err, keys.ErrInvalidKey) {
			t.Errorf("ParseInvertedTicksSeq(%q): %v", s, err)
		}
		if _, _, err := keys.ParseTicksKeySeq(s); !errors.Is(err, keys.ErrInvalidKey) {
			t.Errorf("ParseTicksKeySeq(%q): %v", s, err)
		}
	}
	_, _, err := keys.ParseInvertedTicksSeq("25199547x1999999999_4294967295")
	var ke *keys.KeyError
	if !errors.As(err, &ke) || ke.Pos != 8 || ke.Value != "25199547x1999999999_4294967295" {
		t.Errorf("error in the time part: %v", err)
	}
}

func TestSequencer(t *testing.T) {
	var s keys.Sequencer
	base := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	type pair struct {
		t   time.Time
		seq uint32
	}
	steps := []struct {
		in   time.Time
		want pair
	}{
		{base, pair{base, 0}},
		{base, pair{base, 1}},                                       // same tick
		{base.Add(50 * time.Nanosecond), pair{base, 2}},             // same tick, finer clock
		{base.Add(-time.Second), pair{base, 3}},                     // clock stepped back
		{base.Add(100 * time.Nanosecond), pair{base.Add(100), 0}},   // next tick
		{base.Add(time.Second + 7), pair{base.Add(time.Second), 0}}, // truncated to the tick
	}
	for i, st := range steps {
		gt, gs := s.Next(st.in)
		if !gt.Equal(st.want.t) || gs != st.want.seq {
			t.Errorf("step %d: Next(%v) = %v, %d; want %v, %d", i, st.in, gt, gs, st.want.t, st.want.seq)
		}
	}

	// Concurrent callers with a frozen clock get distinct, ordered keys.
	var c keys.Sequencer
	const workers, each = 4, 500
	out := make(chan string, workers*each)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				tm, seq := c.Next(base)
				out <- keys.InvertedTicksSeq(tm, seq)
			}
		})
	}
	wg.Wait()
	close(out)
	seen := map[string]bool{}
	for k := range out {
		if seen[k] {
			t.Fatalf("duplicate key %q", k)
		}
		seen[k] = true
	}
	if len(seen) != workers*each {
		t.Fatalf("%d keys, want %d", len(seen), workers*each)
	}
	// The last pair handed out is the smallest inverted key.
	tm, seq := c.Next(base)
	last := keys.InvertedTicksSeq(tm, seq)
	for k := range seen {
		if k <= last {
			t.Fatalf("key %q made before %q sorts after it", k, last)
		}
	}
}
