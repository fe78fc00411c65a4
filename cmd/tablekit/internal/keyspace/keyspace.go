// Package keyspace cuts a table's PartitionKey space into ranges that hold
// similar shares of its partitions, with a few one-entity queries instead of
// a scan, for tablekit's parallel reads and its --shard plans.
//
// A range is [From, To) of PartitionKeys in the service's order (ordinal by
// UTF-16 code unit, keys.Compare); an empty To has no upper bound. Every
// boundary Split returns is a PartitionKey the table held when it was
// probed, so a partition is never cut in two.
//
// How it probes: the first key of the range; the longest prefix c that every
// key of the range shares (one probe per character: is there a key at or
// above the prefix's successor?); the highest next character after c (a
// binary search, 16 probes); then keys at evenly spaced next characters
// between the first key's and that highest one. The distinct keys found
// start the occupied parts of the key space; when there are fewer than the
// pieces asked for, each part is split again the same way. So ranges are
// balanced by the spread of keys in the key space, not by entity counts
// (which the service does not tell without a scan): keys that are ids,
// hashes, padded numbers or dates split evenly; a table whose entities
// crowd into a few partitions cannot be split finer than its partitions.
//
// The probes are deterministic: for a table that does not change, every
// process that splits the same range into the same number of pieces gets
// the same boundaries.
package keyspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tablekit/tablekit/keys"
)

// Range is the PartitionKeys from From (inclusive) to To (exclusive); an
// empty To means no upper bound.
type Range struct {
	From string `json:"from"`
	To   string `json:"to,omitempty"`
}

// Contains reports whether pk is in r.
func (r Range) Contains(pk string) bool {
	return keys.Compare(pk, r.From) >= 0 && (r.To == "" || keys.Compare(pk, r.To) < 0)
}

// Empty reports whether r can hold no key (To at or below From).
func (r Range) Empty() bool { return r.To != "" && keys.Compare(r.To, r.From) <= 0 }

func (r Range) String() string {
	to := "the end"
	if r.To != "" {
		to = strconv.Quote(r.To)
	}
	return fmt.Sprintf("PartitionKey from %q to %s", r.From, to)
}

// Prober returns the smallest PartitionKey k of the table with from <= k
// and, when to is not empty, k < to; ok is false when there is none.
type Prober func(ctx context.Context, from, to string) (key string, ok bool, err error)

// DefaultBudget is the most probes a Split makes unless told otherwise.
const DefaultBudget = 600

// Split returns at most pieces-1 boundaries that cut r into ranges of
// similar shares of its partitions, in increasing order, each an existing
// PartitionKey above r's first one. It makes at most budget probes (0
// means DefaultBudget) and returns the boundaries found so far when they
// run out; fewer boundaries than asked for mean the range has too few
// partitions (or the budget ran out).
func Split(ctx context.Context, probe Prober, r Range, pieces, budget int) ([]string, error) {
	if budget <= 0 {
		budget = DefaultBudget
	}
	s := &splitter{ctx: ctx, probe: probe, budget: budget}
	b, err := s.split(r.From, r.To, pieces)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Ranges cuts r at the boundaries (increasing, inside r).
func Ranges(r Range, bounds []string) []Range {
	out := make([]Range, 0, len(bounds)+1)
	from := r.From
	for _, b := range bounds {
		out = append(out, Range{From: from, To: b})
		from = b
	}
	return append(out, Range{From: from, To: r.To})
}

// Fingerprint names a plan's boundaries in a few characters, so that the
// processes of a sharded run can see that they share one.
func Fingerprint(bounds []string) string {
	h := sha256.New()
	for _, b := range bounds {
		h.Write([]byte(strconv.Itoa(len(b))))
		h.Write([]byte{':'})
		h.Write([]byte(b))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// CheckBounds reports whether bounds are increasing and inside r.
func CheckBounds(r Range, bounds []string) error {
	prev := r.From
	for i, b := range bounds {
		if !utf8.ValidString(b) {
			return fmt.Errorf("boundary %d is not valid UTF-8", i)
		}
		if keys.Compare(b, prev) <= 0 {
			return fmt.Errorf("boundary %d (%q) is not above %q", i, b, prev)
		}
		if r.To != "" && keys.Compare(b, r.To) >= 0 {
			return fmt.Errorf("boundary %d (%q) is not below the range's end %q", i, b, r.To)
		}
		prev = b
	}
	return nil
}

// Shard is process K of N that share a job.
type Shard struct{ K, N int }

// ParseShard reads "k/n" with 0 <= k < n.
func ParseShard(s string) (Shard, error) {
	ks, ns, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(ks)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 0 || k >= n || n > 10000 {
		return Shard{}, errors.New("--shard takes k/n with 0 <= k < n <= 10000, such as 0/3")
	}
	return Shard{K: k, N: n}, nil
}

func (s Shard) String() string { return strconv.Itoa(s.K) + "/" + strconv.Itoa(s.N) }

// Pick returns shard s's range of the plan that cuts r at bounds, and false
// when the plan has fewer ranges than shards and s has none.
func (s Shard) Pick(r Range, bounds []string) (Range, bool) {
	rs := Ranges(r, bounds)
	if s.K >= len(rs) {
		return Range{}, false
	}
	return rs[s.K], true
}

// probeUnits is the index space of the first UTF-16 code unit of a probe:
// the BMP characters outside the surrogates as themselves, and the high
// surrogates as the smallest supplementary character that starts with
// each. Index order is the service's order of the one-character strings.
const probeUnits = 0x10000 - 0x400

func unitString(i int) string {
	switch {
	case i < 0xD800:
		return string(rune(i))
	case i < 0xDC00:
		return string(rune(0x10000 + (i-0xD800)<<10))
	default:
		return string(rune(i + 0x400))
	}
}

func unitIndex(r rune) int {
	switch {
	case r < 0xD800:
		return int(r)
	case r >= 0x10000:
		return 0xD800 + int(r-0x10000)>>10
	case r >= 0xE000:
		return int(r) - 0x400
	default: // a lone surrogate: read as U+FFFD
		return 0xFFFD - 0x400
	}
}

// maxPrefix bounds the common prefix followed, in characters.
const maxPrefix = 256

type splitter struct {
	ctx    context.Context
	probe  Prober
	budget int
	used   int
}

var errBudget = errors.New("probe budget spent")

func (s *splitter) first(from, to string) (string, bool, error) {
	if s.used >= s.budget {
		return "", false, errBudget
	}
	s.used++
	if err := s.ctx.Err(); err != nil {
		return "", false, err
	}
	return s.probe(s.ctx, from, to)
}

func (s *splitter) split(from, to string, pieces int) ([]string, error) {
	out, err := s.splitIn(from, to, pieces)
	if errors.Is(err, errBudget) {
		err = nil
	}
	return out, err
}

func (s *splitter) splitIn(from, to string, pieces int) ([]string, error) {
	if pieces <= 1 {
		return nil, nil
	}
	first, ok, err := s.first(from, to)
	if err != nil || !ok {
		return nil, err
	}
	runes := []rune(first)
	n := 0
	for n < len(runes) && n < maxPrefix {
		_, succ := keys.PrefixRange(string(runes[:n+1]))
		if succ != "" && (to == "" || keys.Compare(succ, to) < 0) {
			_, above, err := s.first(succ, to)
			if err != nil {
				return nil, err
			}
			if above {
				break
			}
		}
		n++
	}
	c := string(runes[:n])
	lo := -1
	if n < len(runes) {
		lo = unitIndex(runes[n])
	}
	hi := lo
	for a, b := lo+1, probeUnits-1; a <= b; {
		m := (a + b) / 2
		_, ok, err := s.first(c+unitString(m), to)
		if err != nil {
			return nil, err
		}
		if ok {
			hi, a = m, m+1
		} else {
			b = m - 1
		}
	}
	if hi <= lo {
		return nil, nil // one PartitionKey (or the prefix limit reached)
	}
	k := min(2*pieces, hi-lo)
	var cands []string
	for j := 1; j <= k; j++ {
		u := lo + (j*(hi-lo)+k-1)/k
		key, ok, err := s.first(c+unitString(u), to)
		if errors.Is(err, errBudget) {
			break
		}
		if err != nil {
			return nil, err
		}
		if ok && keys.Compare(key, first) > 0 {
			cands = append(cands, key)
		}
	}
	slices.SortFunc(cands, keys.Compare)
	cands = slices.Compact(cands)
	if len(cands) == 0 {
		return nil, nil
	}
	m := len(cands) + 1
	if m >= pieces {
		out := make([]string, 0, pieces-1)
		for j := 1; j < pieces; j++ {
			out = append(out, cands[j*m/pieces-1])
		}
		return out, nil
	}
	extra := pieces - m
	var out []string
	starts := append([]string{first}, cands...)
	for i := range m {
		more := extra / m
		if i < extra%m {
			more++
		}
		end := to
		if i+1 < m {
			end = starts[i+1]
		}
		sub, err := s.splitIn(starts[i], end, 1+more)
		out = append(out, sub...)
		if i+1 < m {
			out = append(out, starts[i+1])
		}
		if err != nil {
			if errors.Is(err, errBudget) {
				// Keep the boundaries found; the rest stay whole.
				if i+2 < len(starts) {
					out = append(out, starts[i+2:]...)
				}
				return out, err
			}
			return nil, err
		}
	}
	return out, nil
}
