package keyspace

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/keys"
)

// table is a sorted set of PartitionKeys answering probes as the service
// answers a $top=1 query with PartitionKey ge from and lt to, and listing
// its entities' keys a page at a time as a keys-only query does.
type table struct {
	keys     []string
	entities map[string]int // per key; 1 when absent
	page     int            // entities per page; 0 means 1,000
	probes   int
}

func newTable(ks []string) *table {
	ks = slices.Clone(ks)
	slices.SortFunc(ks, keys.Compare)
	return &table{keys: slices.Compact(ks), entities: map[string]int{}}
}

func (t *table) list(_ context.Context, from, to, token string) ([]string, string, error) {
	t.probes++
	var all []string // every entity's key in the range, in order
	for _, k := range t.keys {
		if keys.Compare(k, from) >= 0 && (to == "" || keys.Compare(k, to) < 0) {
			for range max(t.entities[k], 1) {
				all = append(all, k)
			}
		}
	}
	at := 0
	if token != "" {
		at, _ = strconv.Atoi(token)
	}
	size := t.page
	if size == 0 {
		size = 1000
	}
	end := min(at+size, len(all))
	next := ""
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	return all[at:end], next, nil
}

// split splits with both of the table's answers.
func (t *table) split(r Range, pieces, budget int) ([]string, error) {
	return Split(context.Background(), t.probe, t.list, r, pieces, budget)
}

func (t *table) probe(_ context.Context, from, to string) (string, bool, error) {
	t.probes++
	i, _ := slices.BinarySearchFunc(t.keys, from, keys.Compare)
	if i == len(t.keys) || (to != "" && keys.Compare(t.keys[i], to) >= 0) {
		return "", false, nil
	}
	return t.keys[i], true, nil
}

// counts returns how many keys each range of the split holds.
func (t *table) counts(r Range, bounds []string) []int {
	rs := Ranges(r, bounds)
	out := make([]int, len(rs))
	for _, k := range t.keys {
		n := 0
		for i, x := range rs {
			if x.Contains(k) {
				out[i]++
				n++
			}
		}
		if r.Contains(k) && n != 1 {
			panic(fmt.Sprintf("key %q in %d ranges", k, n))
		}
	}
	return out
}

func checkSplit(t *testing.T, tb *table, r Range, pieces int) []string {
	t.Helper()
	b, err := tb.split(r, pieces, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > pieces-1 && pieces > 0 {
		t.Fatalf("%d boundaries for %d pieces", len(b), pieces)
	}
	if err := CheckBounds(r, b); err != nil {
		t.Fatalf("bounds %q: %v", b, err)
	}
	for _, x := range b {
		if _, found := slices.BinarySearchFunc(tb.keys, x, keys.Compare); !found {
			t.Fatalf("boundary %q is not a key of the table", x)
		}
	}
	tb.counts(r, b) // panics when a key is in two ranges or none
	return b
}

func TestSplitBalancesPaddedNumbers(t *testing.T) {
	var ks []string
	for i := range 2000 {
		ks = append(ks, fmt.Sprintf("user-%06d", i))
	}
	tb := newTable(ks)
	b := checkSplit(t, tb, Range{}, 8)
	if len(b) != 7 {
		t.Fatalf("bounds %q, want 7", b)
	}
	for _, n := range tb.counts(Range{}, b) {
		if n < 2000/8/2 || n > 2000/8*2 {
			t.Fatalf("counts %v: not within a factor 2 of 250", tb.counts(Range{}, b))
		}
	}
	if tb.probes > 400 {
		t.Fatalf("%d probes", tb.probes)
	}
	t.Logf("counts %v in %d probes", tb.counts(Range{}, b), tb.probes)
}

// A range of a few pages is cut into equal numbers of entities, whatever
// its key space looks like; a larger one into the pieces asked for, none
// empty, also when a dense region lies beside far-away keys (an outlier
// such as U+FFFF stretches the key space).
func TestSplitDenseRegionBesideOutliers(t *testing.T) {
	for _, n := range []int{100, 20000} {
		for _, extra := range [][]string{{"", "'", "O'Brien", "\uffff"}, {"~", "\U0010ffff"}, {"0"}} {
			ks := slices.Clone(extra)
			for i := range n {
				ks = append(ks, fmt.Sprintf("p%04d", i))
			}
			for i := range n / 2 {
				ks = append(ks, fmt.Sprintf("zz-%x", i*7919))
			}
			tb := newTable(ks)
			b := checkSplit(t, tb, Range{}, 8)
			counts := tb.counts(Range{}, b)
			if len(b) != 7 {
				t.Fatalf("%q: bounds %q", extra, b)
			}
			for _, c := range counts {
				if c == 0 || len(ks) <= 1000*walkPages && (c < len(ks)/8 || c > len(ks)/8+1) {
					t.Errorf("%d partitions, %q: counts %v", len(ks), extra, counts)
				}
			}
			t.Logf("%d partitions, %q: counts %v in %d probes", len(ks), extra, counts, tb.probes)
		}
	}
}

// Listing counts entities, not partitions: a few large partitions among
// many small ones get ranges of their own.
func TestSplitSmallRangeByEntities(t *testing.T) {
	var ks []string
	for i := range 200 {
		ks = append(ks, fmt.Sprintf("k%03d", i))
	}
	tb := newTable(ks)
	tb.entities["k010"], tb.entities["k100"] = 800, 800 // of 1,798 entities
	b := checkSplit(t, tb, Range{}, 4)
	most := 0
	for _, r := range Ranges(Range{}, b) {
		n := 0
		for _, k := range tb.keys {
			if r.Contains(k) {
				n += max(tb.entities[k], 1)
			}
		}
		most = max(most, n)
	}
	// 810 is the least possible largest range of four.
	if len(b) != 3 || most > 810 || tb.probes != 2 {
		t.Errorf("bounds %q: a range of %d entities, in %d requests", b, most, tb.probes)
	}
}

func TestSplitAwkwardKeys(t *testing.T) {
	ks := []string{"", "'", "''", "O'Brien", "a", "a'b", "ü", "üü", "日本", "🎉", "🎉🎉", "\uffff", "\uffff\uffff", "\ud7ff", "\ue000", " ", "%", "z"}
	tb := newTable(ks)
	for pieces := 1; pieces <= 20; pieces++ {
		b := checkSplit(t, tb, Range{}, pieces)
		if pieces > 1 && pieces <= len(ks) && len(b) < pieces/2 {
			t.Errorf("%d pieces: only bounds %q", pieces, b)
		}
	}
	// Inside a range.
	checkSplit(t, tb, Range{From: "a", To: "🎉"}, 4)
}

func TestSplitFewPartitions(t *testing.T) {
	for _, ks := range [][]string{nil, {"only"}, {""}, {"a", "b"}} {
		tb := newTable(ks)
		b := checkSplit(t, tb, Range{}, 8)
		if len(b) > max(0, len(ks)-1) {
			t.Errorf("%q: bounds %q", ks, b)
		}
	}
}

func TestSplitIsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var ks []string
	for range 500 {
		ks = append(ks, fmt.Sprintf("%x", rng.Uint64()))
	}
	b1 := checkSplit(t, newTable(ks), Range{}, 3)
	b2 := checkSplit(t, newTable(ks), Range{}, 3)
	if !slices.Equal(b1, b2) || len(b1) != 2 || Fingerprint(b1) != Fingerprint(b2) {
		t.Fatalf("%q then %q", b1, b2)
	}
}

func TestSplitStopsAtItsBudget(t *testing.T) {
	var ks []string
	for i := range 3000 {
		ks = append(ks, fmt.Sprintf("k%05d", i))
	}
	tb := newTable(ks)
	b, err := tb.split(Range{}, 64, 30)
	if err != nil || tb.probes > 30 {
		t.Fatalf("bounds %d, err %v, %d probes", len(b), err, tb.probes)
	}
	if err := CheckBounds(Range{}, b); err != nil {
		t.Fatal(err)
	}
}

func TestShard(t *testing.T) {
	for _, bad := range []string{"", "3", "3/3", "-1/3", "a/b", "1/0", "0/100000"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) took it", bad)
		}
	}
	s, err := ParseShard("1/3")
	if err != nil || s.K != 1 || s.N != 3 || s.String() != "1/3" {
		t.Fatal(s, err)
	}
	r, ok := s.Pick(Range{}, []string{"m", "t"})
	if !ok || r != (Range{From: "m", To: "t"}) {
		t.Fatal(r, ok)
	}
	if _, ok := (Shard{K: 2, N: 3}).Pick(Range{}, []string{"m"}); ok {
		t.Fatal("a shard beyond the plan's ranges has one")
	}
}

func FuzzSplit(f *testing.F) {
	f.Add([]byte("a\x00b\x00c\x00d"), uint8(4), "", "")
	f.Add([]byte("\x00'\x00O'Brien\x00ü\x00🎉"), uint8(3), "'", "🎉")
	f.Fuzz(func(t *testing.T, raw []byte, pieces uint8, from, to string) {
		var ks []string
		start := 0
		for i := 0; i <= len(raw); i++ {
			if i == len(raw) || raw[i] == 0 {
				// The service holds only valid UTF-16: keys are valid UTF-8.
				ks = append(ks, strings.ToValidUTF8(string(raw[start:i]), "\uFFFD"))
				start = i + 1
			}
		}
		r := Range{From: strings.ToValidUTF8(from, "?"), To: strings.ToValidUTF8(to, "?")}
		if r.Empty() {
			return
		}
		tb := newTable(ks)
		tb.page = int(pieces%7) + 1 // small pages: some inputs list, others probe
		b, err := tb.split(r, int(pieces%20), 200)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckBounds(r, b); err != nil {
			t.Fatalf("keys %q range %v: bounds %q: %v", ks, r, b, err)
		}
		tb.counts(r, b)
	})
}
