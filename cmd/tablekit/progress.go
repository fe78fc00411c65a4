package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// progress prints how far a command has come: on a terminal one line
// rewritten in place (\r), otherwise a plain line (or with --json an
// event) every --progress-interval, each with the count, the rate, the ETA
// when the total is known, and the resume token when there is one.
type progress struct {
	c     *cli
	unit  string
	start time.Time

	mu     sync.Mutex
	count  int64 // done, with the runs resumed
	base   int64 // done before this run
	total  int64 // 0: unknown
	frac   float64
	token  string
	extra  string
	drawn  bool
	closed bool

	stopc chan struct{}
	wg    sync.WaitGroup
}

// startProgress starts the reporter; base is what resumed runs did.
func (c *cli) startProgress(unit string, base int64) *progress {
	p := &progress{c: c, unit: unit, start: time.Now(), count: base, base: base, stopc: make(chan struct{})}
	if c.quiet {
		return p
	}
	every := c.interval
	if c.errTTY && !c.json {
		every = 250 * time.Millisecond
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stopc:
				return
			case <-t.C:
				p.print()
			}
		}
	}()
	return p
}

func (p *progress) set(count int64) {
	p.mu.Lock()
	p.count = count
	p.mu.Unlock()
}

// setFraction sets how much of the work is done (0 to 1) when a count of
// the total is not known but a share is (bytes of a file read).
func (p *progress) setFraction(f float64) {
	p.mu.Lock()
	p.frac = f
	p.mu.Unlock()
}

func (p *progress) setToken(tok string) {
	p.mu.Lock()
	p.token = tok
	p.mu.Unlock()
}

func (p *progress) setExtra(s string) {
	p.mu.Lock()
	p.extra = s
	p.mu.Unlock()
}

type progressState struct {
	count, total int64
	rate         float64
	eta          time.Duration // -1: unknown
	token, extra string
}

func (p *progress) snapshot() progressState {
	p.mu.Lock()
	defer p.mu.Unlock()
	el := time.Since(p.start).Seconds()
	s := progressState{count: p.count, total: p.total, eta: -1, token: p.token, extra: p.extra}
	if el > 0 {
		s.rate = float64(p.count-p.base) / el
	}
	switch {
	case p.total > 0 && s.rate > 0:
		s.eta = time.Duration(float64(max(p.total-p.count, 0)) / s.rate * float64(time.Second))
	case p.frac > 0 && p.frac <= 1:
		s.eta = time.Duration(el * (1 - p.frac) / p.frac * float64(time.Second))
	}
	return s
}

func (p *progress) print() {
	s := p.snapshot()
	c := p.c
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	switch {
	case c.json:
		ev := map[string]any{"event": "progress", "command": c.name, "count": s.count, "rate": math.Round(s.rate*10) / 10}
		if s.total > 0 {
			ev["total"] = s.total
		}
		if s.eta >= 0 {
			ev["etaSeconds"] = math.Round(s.eta.Seconds())
		}
		if s.token != "" {
			ev["resume"] = s.token
		}
		c.event(ev)
	case c.errTTY:
		line := fmt.Sprintf("%s %s %s  %s/s", c.name, group(s.count), p.unit, group(int64(s.rate)))
		if s.total > 0 {
			line = fmt.Sprintf("%s %s of %s %s  %s/s", c.name, group(s.count), group(s.total), p.unit, group(int64(s.rate)))
		}
		if s.eta >= 0 {
			line += "  ETA " + clock(s.eta)
		}
		if s.extra != "" {
			line += "  " + s.extra
		}
		fmt.Fprintf(c.errw, "\r\033[K%s", line)
		p.drawn = true
	default:
		line := fmt.Sprintf("tablekit %s: %d %s, %.0f/s", c.name, s.count, p.unit, s.rate)
		if s.total > 0 {
			line = fmt.Sprintf("tablekit %s: %d of %d %s, %.0f/s", c.name, s.count, s.total, p.unit, s.rate)
		}
		if s.eta >= 0 {
			line += ", ETA " + clock(s.eta)
		}
		if s.extra != "" {
			line += ", " + s.extra
		}
		if s.token != "" {
			line += ", resume: " + s.token
		}
		fmt.Fprintln(c.errw, line)
	}
}

// stop ends the reporter and clears the terminal line.
func (p *progress) stop() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	close(p.stopc)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.drawn {
		fmt.Fprint(p.c.errw, "\r\033[K")
	}
}

func (p *progress) elapsed() time.Duration { return time.Since(p.start) }

func (p *progress) rate() float64 { return p.snapshot().rate }

// group writes n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// clock writes d as h:mm:ss or m:ss.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// parseSize reads 100MB, 64MiB, 1G, 512k or a number of bytes.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || f*float64(mult) > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is not a size such as 100MB, 64MiB or 1G", s)
	}
	return int64(f * float64(mult)), nil
}
