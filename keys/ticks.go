package keys

import (
	"math"
	"sync"
	"time"
)

// .NET time constants.
const (
	// MaxTicks is DateTime.MaxValue.Ticks: 9999-12-31T23:59:59.9999999 in
	// 100-nanosecond ticks since 0001-01-01T00:00:00.
	MaxTicks int64 = 3155378975999999999
	// TicksPerSecond is the number of .NET ticks in a second.
	TicksPerSecond = 10_000_000
	// TicksLength is the length of the keys TicksKey and InvertedTicks
	// return: 19 digits, the .NET format "D19".
	TicksLength = 19

	// unixEpochSeconds is the number of seconds from 0001-01-01 to
	// 1970-01-01 (719,162 days).
	unixEpochSeconds = 62135596800
	// minUnix and maxUnix are the Unix seconds of DateTime.MinValue and of
	// the last whole second of DateTime.MaxValue.
	minUnix = -unixEpochSeconds
	maxUnix = MaxTicks/TicksPerSecond - unixEpochSeconds
)

// Ticks returns the .NET DateTime.Ticks of the instant t: the number of
// 100-nanosecond intervals since 0001-01-01T00:00:00 UTC, whatever t's
// location (the instant is what counts; t is not read as a local wall
// clock). Nanoseconds below 100 are dropped, as .NET cannot hold them.
//
// DateTime covers 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z; a t
// before that range returns 0 and a t after it returns MaxTicks (use
// InvertedTicksChecked or TicksKeyChecked to get an error instead).
func Ticks(t time.Time) int64 {
	sec := t.Unix()
	switch {
	case sec < minUnix:
		return 0
	case sec > maxUnix:
		return MaxTicks
	}
	return (sec+unixEpochSeconds)*TicksPerSecond + int64(t.Nanosecond()/100)
}

// inTicksRange reports whether t is within the range of .NET DateTime.
func inTicksRange(t time.Time) bool {
	sec := t.Unix()
	return sec >= minUnix && sec <= maxUnix
}

// FromTicks returns the instant, in UTC, of .NET DateTime ticks: the
// inverse of Ticks. ticks outside 0 … MaxTicks are clamped to that range.
func FromTicks(ticks int64) time.Time {
	ticks = max(0, min(ticks, MaxTicks))
	return time.Unix(ticks/TicksPerSecond-unixEpochSeconds, ticks%TicksPerSecond*100).UTC()
}

// InvertedTicks returns the design guide's log-tail key (§6.7) for t:
// DateTime.MaxValue.Ticks - t.Ticks as 19 zero-padded digits, exactly the
// .NET
//
//	string.Format("{0:D19}", DateTime.MaxValue.Ticks - DateTime.UtcNow.Ticks)
//
// so keys written by .NET services and by tablekit interleave correctly.
// Later instants give smaller keys: a query returns the newest entities
// first, and $top=n fetches the n most recent. (A .NET service must use
// UTC, DateTime.UtcNow, as Ticks does; DateTime.Now counts local ticks.)
//
// Times outside the DateTime range are clamped as in Ticks. Two instants in
// the same 100 ns tick give the same key: see InvertedTicksSeq and
// Sequencer for unique keys.
func InvertedTicks(t time.Time) string {
	var buf [TicksLength]byte
	return string(appendPadUint(buf[:0], uint64(MaxTicks-Ticks(t)), TicksLength))
}

// AppendInvertedTicks appends InvertedTicks(t) to dst and returns the
// extended buffer.
func AppendInvertedTicks(dst []byte, t time.Time) []byte {
	return appendPadUint(dst, uint64(MaxTicks-Ticks(t)), TicksLength)
}

// InvertedTicksChecked is InvertedTicks with an error (RuleTimeRange)
// instead of clamping when t is outside the range of .NET DateTime.
func InvertedTicksChecked(t time.Time) (string, error) {
	if !inTicksRange(t) {
		return "", newErr("InvertedTicksChecked", RuleTimeRange, t.Format(time.RFC3339Nano))
	}
	return InvertedTicks(t), nil
}

// ParseInvertedTicks returns the instant, in UTC, that InvertedTicks (or
// the .NET formula) encoded as s. s must be exactly 19 ASCII digits whose
// value is at most MaxTicks; anything else is a *KeyError with RuleSyntax.
// The result is exact to the tick: InvertedTicks(ParseInvertedTicks(s)) ==
// s for every s it accepts.
func ParseInvertedTicks(s string) (time.Time, error) {
	v, err := parseTicks("ParseInvertedTicks", s)
	if err != nil {
		return time.Time{}, err
	}
	return FromTicks(MaxTicks - v), nil
}

// TicksKey returns the forward (oldest first) time key for t: Ticks(t) as
// 19 zero-padded digits, the .NET string.Format("{0:D19}",
// DateTime.UtcNow.Ticks). Later instants give larger keys. Times outside
// the DateTime range are clamped as in Ticks.
func TicksKey(t time.Time) string {
	var buf [TicksLength]byte
	return string(appendPadUint(buf[:0], uint64(Ticks(t)), TicksLength))
}

// TicksKeyChecked is TicksKey with an error (RuleTimeRange) instead of
// clamping when t is outside the range of .NET DateTime.
func TicksKeyChecked(t time.Time) (string, error) {
	if !inTicksRange(t) {
		return "", newErr("TicksKeyChecked", RuleTimeRange, t.Format(time.RFC3339Nano))
	}
	return TicksKey(t), nil
}

// ParseTicksKey returns the instant, in UTC, that TicksKey encoded as s:
// exactly 19 ASCII digits whose value is at most MaxTicks.
func ParseTicksKey(s string) (time.Time, error) {
	v, err := parseTicks("ParseTicksKey", s)
	if err != nil {
		return time.Time{}, err
	}
	return FromTicks(v), nil
}

// parseTicks parses 19 digits with a value of at most MaxTicks.
func parseTicks(fn, s string) (int64, error) {
	if len(s) != TicksLength {
		return 0, newErr(fn, RuleSyntax, s)
	}
	v, pos := parseDigits(s)
	if pos >= 0 {
		return 0, posErr(fn, RuleSyntax, s, pos)
	}
	if v > uint64(MaxTicks) {
		return 0, newErr(fn, RuleSyntax, s)
	}
	return int64(v), nil
}

// seqLength is the length of the Seq keys: see "Unique time keys" in the
// package documentation.
const seqLength = TicksLength + 1 + 10

// InvertedTicksSeq returns InvertedTicks(t) followed by "_" and the
// inverted sequence number: see "Unique time keys" in the package documentation.
func InvertedTicksSeq(t time.Time, seq uint32) string {
	var buf [seqLength]byte
	b := appendPadUint(buf[:0], uint64(MaxTicks-Ticks(t)), TicksLength)
	b = append(b, '_')
	b = appendPadUint(b, uint64(math.MaxUint32-seq), 10)
	return string(b)
}

// ParseInvertedTicksSeq reverses InvertedTicksSeq. It accepts exactly the
// strings InvertedTicksSeq returns.
func ParseInvertedTicksSeq(s string) (time.Time, uint32, error) {
	v, seq, err := parseSeq("ParseInvertedTicksSeq", s)
	if err != nil {
		return time.Time{}, 0, err
	}
	return FromTicks(MaxTicks - v), math.MaxUint32 - seq, nil
}

// TicksKeySeq returns TicksKey(t) followed by "_" and the sequence number:
// see "Unique time keys" in the package documentation.
func TicksKeySeq(t time.Time, seq uint32) string {
	var buf [seqLength]byte
	b := appendPadUint(buf[:0], uint64(Ticks(t)), TicksLength)
	b = append(b, '_')
	b = appendPadUint(b, uint64(seq), 10)
	return string(b)
}

// ParseTicksKeySeq reverses TicksKeySeq. It accepts exactly the strings
// TicksKeySeq returns.
func ParseTicksKeySeq(s string) (time.Time, uint32, error) {
	v, seq, err := parseSeq("ParseTicksKeySeq", s)
	if err != nil {
		return time.Time{}, 0, err
	}
	return FromTicks(v), seq, nil
}

func parseSeq(fn, s string) (int64, uint32, error) {
	if len(s) != seqLength || s[TicksLength] != '_' {
		return 0, 0, newErr(fn, RuleSyntax, s)
	}
	v, err := parseTicks(fn, s[:TicksLength])
	if err != nil {
		e := err.(*KeyError)
		e.Value = s
		return 0, 0, e
	}
	seq, pos := parseDigits(s[TicksLength+1:])
	if pos >= 0 {
		return 0, 0, posErr(fn, RuleSyntax, s, TicksLength+1+pos)
	}
	if seq > math.MaxUint32 {
		return 0, 0, newErr(fn, RuleSyntax, s)
	}
	return v, uint32(seq), nil
}

// Sequencer hands out strictly increasing (time, sequence number) pairs
// for the Seq keys: see "Unique time keys" in the package documentation. The zero value is ready
// to use; a Sequencer is safe for concurrent use and must not be copied
// after first use.
type Sequencer struct {
	mu   sync.Mutex
	last int64 // ticks of the last pair handed out
	seq  uint32
	used bool
}

// Next returns t truncated to its tick, and sequence number 0, when t's
// tick is later than that of the previous pair; otherwise it returns the
// previous pair's tick with the next sequence number (should the sequence
// number ever run out, the tick advances by one). Each pair is therefore
// strictly greater than the one before, so InvertedTicksSeq keys made from
// successive pairs strictly decrease and TicksKeySeq keys strictly
// increase. A nil *Sequencer keeps no state: it returns t truncated to its
// tick and 0 every time, which makes nothing unique.
func (s *Sequencer) Next(t time.Time) (time.Time, uint32) {
	ticks := Ticks(t)
	if s == nil {
		return FromTicks(ticks), 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.used || ticks > s.last:
		s.last, s.seq, s.used = ticks, 0, true
	case s.seq < math.MaxUint32:
		s.seq++
	case s.last < MaxTicks:
		s.last, s.seq = s.last+1, 0
	default:
		// The end of time: nothing greater exists, repeat the last pair.
	}
	return FromTicks(s.last), s.seq
}
