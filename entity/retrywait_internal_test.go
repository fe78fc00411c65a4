package entity

import (
	"testing"
	"time"
)

// TestRetryPolicyWait: the wait after the n-th lost round is in [W/2, W],
// W = max(BaseDelay, the lost round's duration)·2^(n−1) up to MaxDelay.
func TestRetryPolicyWait(t *testing.T) {
	ms := time.Millisecond
	def := RetryPolicy{}.withDefaults()
	cases := []struct {
		p    RetryPolicy
		n    int
		lost time.Duration
		w    time.Duration
	}{
		{def, 1, 0, 20 * ms},
		{def, 1, 5 * ms, 20 * ms},   // a quick round: BaseDelay
		{def, 1, 50 * ms, 50 * ms},  // a slow round sets the unit
		{def, 3, 0, 80 * ms},        // doubling
		{def, 3, 50 * ms, 200 * ms}, // from the round's duration
		{def, 7, 0, time.Second},    // 1280 ms, capped
		{def, 1000, 0, time.Second}, // no overflow
		{def, 1, 5 * time.Second, time.Second},
		{RetryPolicy{BaseDelay: ms, MaxDelay: 3 * ms}.withDefaults(), 2, 0, 2 * ms},
		{RetryPolicy{BaseDelay: ms, MaxDelay: 3 * ms}.withDefaults(), 3, 0, 3 * ms},
	}
	for _, c := range cases {
		hi, lo := c.p.wait(c.n, c.lost, 0), c.p.wait(c.n, c.lost, 0.999999)
		if hi != c.w || lo < c.w/2 || lo > c.w/2+c.w/1000 {
			t.Errorf("%+v, round %d lost in %v: waits %v to %v, want %v to %v", c.p, c.n, c.lost, lo, hi, c.w/2, c.w)
		}
	}
	if p := (ModifyOptions{}).withDefaults().Retry; p.Attempts != 40 || p.BaseDelay != 20*ms || p.MaxDelay != time.Second {
		t.Errorf("Modify's defaults: %+v", p)
	}
	if p := (ModifyOptions{Retry: RetryPolicy{Attempts: 3}}).withDefaults().Retry; p.Attempts != 3 {
		t.Errorf("Modify with 3 attempts: %+v", p)
	}
	if p := def; p.Attempts != 10 {
		t.Errorf("Retry's defaults: %+v", p)
	}
}
