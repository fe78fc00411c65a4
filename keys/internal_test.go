package keys

import (
	"math"
	"testing"
	"time"
)

// The sequence number running out advances the tick; at the end of time
// the last pair repeats rather than wrapping around.
func TestSequencerOverflow(t *testing.T) {
	base := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	s := Sequencer{last: Ticks(base), seq: math.MaxUint32 - 1, used: true}
	if tm, seq := s.Next(base); !tm.Equal(base) || seq != math.MaxUint32 {
		t.Fatalf("Next = %v, %d", tm, seq)
	}
	tm, seq := s.Next(base)
	if !tm.Equal(base.Add(100)) || seq != 0 {
		t.Fatalf("after the last sequence number: %v, %d; want the next tick, 0", tm, seq)
	}
	if InvertedTicksSeq(tm, seq) >= InvertedTicksSeq(base, math.MaxUint32) {
		t.Fatal("the pair after the overflow does not sort first")
	}

	end := FromTicks(MaxTicks)
	s = Sequencer{last: MaxTicks, seq: math.MaxUint32, used: true}
	if tm, seq := s.Next(end); !tm.Equal(end) || seq != math.MaxUint32 {
		t.Fatalf("at the end of time: %v, %d", tm, seq)
	}
}

func TestRankAndSuccessor(t *testing.T) {
	order := []rune{0, 'a', 0xD7FF, 0x10000, 0x1F600, 0x10FFFF, 0xE000, 0xFFFD, 0xFFFF}
	for i := 1; i < len(order); i++ {
		if rank(order[i-1]) >= rank(order[i]) {
			t.Errorf("rank(%U) >= rank(%U)", order[i-1], order[i])
		}
	}
	for _, tt := range []struct{ r, want rune }{
		{'a', 'b'}, {0xD7FF, 0x10000}, {0x10FFFF, 0xE000}, {0xFFFE, 0xFFFF}, {0x1F600, 0x1F601},
	} {
		if got := successor(tt.r); got != tt.want || rank(got) != rank(tt.r)+1 {
			t.Errorf("successor(%U) = %U, want %U, the next rank", tt.r, got, tt.want)
		}
	}
}
