// Package keyspace cuts a table's PartitionKey space into ranges for
// parallel reads and for --shard plans, without a scan of the table.
//
// A range is [From, To) of PartitionKeys in the service's order (ordinal by
// UTF-16 code unit, keys.Compare); an empty To has no upper bound. Every
// boundary Split returns is a PartitionKey the table held when it looked,
// so a partition is never cut in two.
//
// How it looks: a range of up to 16 pages (16,000 entities) is listed,
// keys only, and cut where equal shares of its entities lie on either
// side. A larger one is probed with one-entity queries: the first key; the
// longest prefix every key shares (one probe per character: is there a key
// at or above the prefix's successor?); the highest next character (a
// binary search); then keys at evenly spaced next characters. The piece
// where the most distinct keys turned up is cut in two at the middle one,
// and probed again when it knows too few, until there are enough pieces.
// So a large range is balanced by the spread of its partitions over the
// key space, not by entity counts, which the service does not tell without
// a scan: keys that are ids, hashes, padded numbers or dates split evenly;
// a range cannot be cut finer than its partitions; and a dense cluster of
// keys beside a few far-away ones is cut less evenly
// (TestSplitDenseRegionBesideOutliers shows how much).
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

// Lister returns the PartitionKeys of the entities of one page of the
// range [from, to) (to empty: no upper bound), reading keys only, from the
// page token (empty: the start), and the token of the next page ("" at the
// end).
type Lister func(ctx context.Context, from, to, token string) (pks []string, next string, err error)

// DefaultBudget is the most requests a Split makes unless told otherwise.
const DefaultBudget = 600

// Split returns at most pieces-1 boundaries that cut r into ranges of
// similar shares of its partitions, in increasing order, each an existing
// PartitionKey above r's first one. It makes at most budget probes (0
// means DefaultBudget) and returns the boundaries found so far when they
// run out; fewer boundaries than asked for mean the range has too few
// partitions (or the budget ran out).
func Split(ctx context.Context, probe Prober, list Lister, r Range, pieces, budget int) ([]string, error) {
	if budget <= 0 {
		budget = DefaultBudget
	}
	s := &splitter{ctx: ctx, probe: probe, list: list, budget: budget}
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

// walkPages is the most pages of keys a split lists (16,000 entities in
// pages of 1,000) before it cuts by probing the key space instead.
const walkPages = 16

// quantiles cuts the partitions seen (with the entities seen in each) where
// equal shares of the entities lie on either side.
func quantiles(seen map[string]int, pieces int) []string {
	pks := make([]string, 0, len(seen))
	total := 0
	for pk, n := range seen {
		pks = append(pks, pk)
		total += n
	}
	slices.SortFunc(pks, keys.Compare)
	var out []string
	cum, j := 0, 1
	for i, pk := range pks {
		if i > 0 && j < pieces && cum*pieces >= j*total {
			out = append(out, pk)
			for j < pieces && cum*pieces >= j*total {
				j++
			}
		}
		cum += seen[pk]
	}
	return out
}

// maxPrefix bounds the common prefix followed, in characters.
const maxPrefix = 256

type splitter struct {
	ctx    context.Context
	probe  Prober
	list   Lister
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

// piece is a range being cut and the keys known inside it above its
// first: found by a probe round over it (explored), or by its parent's.
type piece struct {
	from, to string
	explored bool
	cands    []string
}

// split cuts [from, to): a range of at most walkPages pages of entities at
// the quantiles of its entities, read as keys; a larger one by bisection: a piece that knows fewer than two
// keys inside it is explored — one probe round finding keys spread over
// its key space — and the piece that knows the most keys is cut in two at
// the middle one, the halves keeping the keys on their sides, until there
// are enough pieces, no piece holds more than one PartitionKey, or the
// budget is spent. Cutting where the most keys were found cuts a dense
// region of the key space before a sparse one, however far apart they lie.
func (s *splitter) split(from, to string, pieces int) ([]string, error) {
	if pieces <= 1 {
		return nil, nil
	}
	// A small range: list its entities' keys, a page at a time, and cut
	// where equal shares of them lie on either side.
	if s.list != nil {
		seen := map[string]int{}
		token := ""
		for range walkPages {
			if s.used >= s.budget {
				return nil, nil
			}
			s.used++
			pks, next, err := s.list(s.ctx, from, to, token)
			if err != nil {
				return nil, err
			}
			for _, pk := range pks {
				seen[pk]++
			}
			if next == "" {
				return quantiles(seen, pieces), nil
			}
			token = next
		}
	}
	list := []*piece{{from: from, to: to}}
	for len(list) < pieces {
		best := -1
		for i, p := range list {
			if !p.explored && len(p.cands) < 2 {
				cands, err := s.explore(p.from, p.to, pieces)
				if errors.Is(err, errBudget) {
					return bounds(list), nil
				}
				if err != nil {
					return nil, err
				}
				p.explored, p.cands = true, cands
			}
			if len(p.cands) > 0 && (best < 0 || len(p.cands) > len(list[best].cands)) {
				best = i
			}
		}
		if best < 0 {
			break // every piece is one PartitionKey, as far as probes tell
		}
		p := list[best]
		mid := len(p.cands) / 2
		left := &piece{from: p.from, to: p.cands[mid], cands: p.cands[:mid]}
		right := &piece{from: p.cands[mid], to: p.to, cands: p.cands[mid+1:]}
		list = slices.Concat(list[:best], []*piece{left, right}, list[best+1:])
	}
	return bounds(list), nil
}

func bounds(list []*piece) []string {
	var out []string
	for _, p := range list[1:] {
		out = append(out, p.from)
	}
	return out
}

// explore finds keys of [from, to) spread over its key space: the first;
// the longest prefix c all keys share (one probe per character: is there a
// key at or above the prefix's successor?); the highest next character
// after c (a binary search, bounded by to when to starts with c); then the
// first key at or above each of up to 2*pieces evenly spaced next
// characters. It returns the distinct keys above the first, in order.
// (pieces+1 probes: enough keys to cut the piece as often as a split asks.)
func (s *splitter) explore(from, to string, pieces int) ([]string, error) {
	first, ok, err := s.first(from, to)
	if err != nil || !ok {
		return nil, err
	}
	runes := []rune(first)
	// Every key of [from, to) shares first's common prefix with to.
	n := 0
	if to != "" {
		tr := []rune(to)
		for n < len(runes) && n < len(tr) && runes[n] == tr[n] {
			n++
		}
	}
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
	top := probeUnits - 1
	if tr := []rune(to); to != "" && len(tr) > n && string(tr[:n]) == c {
		top = unitIndex(tr[n])
	}
	hi := lo
	for a, b := lo+1, top; a <= b; {
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
	k := min(pieces+1, hi-lo)
	var cands []string
	for j := 1; j <= k; j++ {
		u := lo + (j*(hi-lo)+k-1)/k
		key, ok, err := s.first(c+unitString(u), to)
		if err != nil {
			if errors.Is(err, errBudget) && len(cands) > 0 {
				break
			}
			return nil, err
		}
		if ok && keys.Compare(key, first) > 0 {
			cands = append(cands, key)
		}
	}
	slices.SortFunc(cands, keys.Compare)
	return slices.Compact(cands), nil
}
