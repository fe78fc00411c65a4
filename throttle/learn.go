package throttle

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"time"
)

// learning sets how a key whose Config rate is 0 learns its limit (see the
// package doc, "Learning a limit").
type learning struct {
	start  float64       // the first rate, as a share of the target
	every  time.Duration // the least time between two raises
	settle time.Duration // a throttle answered sooner after a decrease changes nothing
	under  float64       // the ceiling after a throttle, as a share of the rate throttled
	back   float64       // the goal after a throttle, as a share of the ceiling
	near   float64       // where a key of few tries per second stops climbing fast, as a share of the ceiling
	climb  float64       // the most one raise multiplies the rate by on the way there
	short  int           // a throttle after fewer tries paced through at the top of the climb lowers the ceiling further
	probe  float64       // the probe's growth per second, as a share of the rate
	step   float64       // and as a share of the target
	tries  float64       // the tries per second under which the probe slows, with their square
	again  time.Duration // the probe's growth doubles every such time without a throttle
	calm   int           // a throttle after as many tries through may be a limit that dropped
}

var defaultLearning = learning{
	start:  1.0 / 8,
	every:  250 * time.Millisecond,
	settle: 500 * time.Millisecond,
	under:  0.97,
	back:   0.9,
	near:   0.98,
	climb:  1.2,
	short:  8,
	probe:  0.01,
	step:   0.0005,
	tries:  10,
	again:  time.Minute,
	calm:   20,
}

// many is how close p is to a key of many tries per second, from 0 (a
// try now and then) to 1 (learning.tries or more).
func (l *Limiter) many(p *pacer) float64 {
	return min(1, p.rate/p.cost/l.learn.tries)
}

// lower answers a throttled try of this round (booked in the key's
// current epoch, at rate). The ceiling becomes a little under the rate
// throttled — more when the throttle came a few tries after the climb
// reached its top: a partition's burst had hidden how far above its limit
// the rate went. The goal of the climb back is a little under the
// ceiling, or the last rate that got through if lower, or half the rate
// throttled when nothing got through since the last throttle (the slow
// start's first throttle, a limit that dropped). The rate halves, which
// drains what the round put in debt; a key of few tries per second, whose
// refused try took nothing, goes to the goal at once instead; and a round
// throttled with nothing through since a throttle that ended a calm
// quarters it: the limit dropped, and is reached in fewer rounds.
func (l *Limiter) lower(p *pacer, rate float64, now time.Time) {
	floor := l.floor(p)
	lo := rate / 2
	if p.passed {
		lo = min(p.passedAt, rate)
	}
	p.ceiling = rate * l.learn.under
	if p.wins >= 0 && p.wins < l.learn.short {
		p.ceiling = rate * l.learn.back
	}
	p.good = min(p.ceiling*l.learn.back, lo)
	p.rate = min(p.rate, rate) / 2
	if p.passed {
		p.rate = max(p.rate, p.good*(1-l.many(p)))
	} else if p.calm {
		p.rate /= 2
		p.good = p.rate
	}
	p.calm = p.probing && p.since >= l.learn.calm
	p.since = 0
	p.rate, p.ceiling, p.good = max(p.rate, floor), max(p.ceiling, floor), max(p.good, floor)
	p.probing, p.passed, p.streak, p.wins = true, false, 0, -1
	p.epoch++
	p.stepped, p.lowered = now, now
	p.busy = false
}

// raise answers a try of the key's current epoch that got through, booked
// at rate; paced says it waited for the key's turn, so that it went at the
// key's rate. A rate got through when two such tries in a row did (the
// first may have met a partition rested by the throttle).
//
// After a throttle, the first paced try through takes the rate back to
// the goal at once. Otherwise, at most once per learning.every, when a
// try booked at the current rate got through and the key set the pace, the
// rate rises: in the slow start it doubles; after a throttle a key of few
// tries per second climbs fast (at most by learning.climb a raise, half
// the way to the ceiling on a log scale) to near the ceiling, where a key
// of many already is at its goal; then it probes, by learning.probe of
// itself and learning.step of the target per second — times the square of
// the share of learning.tries it makes per second, since each probe above
// the limit costs a key of few tries a larger share of them — doubling
// every learning.again without a throttle. The probe goes with time, not
// with tries, and its step with the target, not with the rate, so that of
// processes that share a partition, the one with the larger share,
// throttled the more often, gives share to the others.
func (l *Limiter) raise(p *pacer, paced bool, rate float64, sent, now time.Time) {
	p.since++
	if paced {
		p.streak++
		if p.streak >= 2 {
			p.passed, p.passedAt = true, rate
		}
		if p.wins >= 0 {
			p.wins++
		}
	}
	if p.probing && p.rate < p.good && paced && !sent.Before(p.stepped) {
		p.rate = p.good
		p.stepped, p.busy = now, false
		return
	}
	if sent.Before(p.stepped) || now.Sub(p.stepped) < l.learn.every {
		return // no answer yet at the current rate
	}
	if !p.busy {
		p.stepped = now // not the pace-setter: nothing learned
		return
	}
	f := l.many(p)
	near := p.ceiling * (l.learn.near - (l.learn.near-l.learn.back)*f)
	switch {
	case !p.probing:
		p.rate *= 2
	case p.rate < p.good:
		p.rate = p.good
	case p.rate < near:
		p.rate = min(near, math.Sqrt(p.rate*p.ceiling), p.rate*l.learn.climb)
		if p.rate >= near {
			p.wins = 0 // at the top of the climb: count the tries through
		}
	default:
		dt := min(now.Sub(p.stepped), 5*time.Second).Seconds()
		growth := (l.learn.probe*p.rate + l.learn.step*p.target) * f * f
		growth *= math.Exp2(float64(now.Sub(p.lowered)) / float64(l.learn.again))
		p.rate += min(growth*dt, p.rate)
	}
	p.rate = min(p.target, p.rate)
	p.stepped, p.busy = now, false
}

// overAccountLimit reports a 503 whose message says the account's limit
// was met ("Operations per second is over the account limit.", or
// ingress, egress): the service's ServerBusy messages name the account
// when it is the account that is throttled. It reads at most 4 KiB of the
// body and leaves the body whole for the caller.
func overAccountLimit(resp *http.Response) bool {
	if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Body == nil || resp.Body == http.NoBody {
		return false
	}
	head := make([]byte, 4<<10)
	n, err := io.ReadFull(resp.Body, head)
	head = head[:n]
	rest := resp.Body
	if err != nil { // all of it read
		rest.Close()
		resp.Body = io.NopCloser(bytes.NewReader(head))
	} else {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), rest), rest}
	}
	return bytes.Contains(head, []byte("over the account limit"))
}
