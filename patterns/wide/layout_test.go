package wide

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
)

// propsOf makes n properties of every EDM type, with strings and binaries
// of up to maxLen units.
func propsOf(r *rand.Rand, n, maxLen int) map[string]any {
	props := make(map[string]any, n)
	for i := range n {
		name := fmt.Sprintf("P%d_%d", i, r.IntN(1000))
		switch i % 8 {
		case 0:
			props[name] = strings.Repeat("é😀a", r.IntN(min(maxLen, entity.MaxStringUnits)/4+1))
		case 1:
			props[name] = int32(i)
		case 2:
			props[name] = int64(i)
		case 3:
			props[name] = float64(i)
		case 4:
			props[name] = true
		case 5:
			props[name] = time.Unix(int64(i), 0).UTC()
		case 6:
			props[name] = uuid.New()
		default:
			props[name] = make([]byte, r.IntN(min(maxLen, entity.MaxBinaryBytes)+1))
		}
	}
	return props
}

// rowsOf builds the rows of a version as a write sends them.
func rowsOf(pk, id string, props map[string]any, layout [][]string) []*entity.DynamicEntity {
	tokens := make([]string, len(layout))
	for k := range tokens {
		tokens[k] = newToken()
	}
	out := []*entity.DynamicEntity{headRow(pk, id, "", newToken(), 1<<52, 1<<52, tokens, true)}
	for k, names := range layout {
		r := &entity.DynamicEntity{PartitionKey: pk, RowKey: rowKey(id, k+1)}
		for _, name := range names {
			r.Set(name, props[name])
		}
		out = append(out, r.Set(propVersion, tokens[k]))
	}
	// Fill the head's history, as after many writes.
	for i := range historyLen {
		out[0].Set(propHistory+pad2(i), newToken())
	}
	return out
}

// Every row the assignment makes is valid by the codec's own limits, every
// property is in exactly one row, and the assignment is deterministic.
func TestAssignKeepsEveryRowWithinTheLimits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	pk, id := strings.Repeat("p", 200), strings.Repeat("i", 300) // long keys take room
	for _, c := range []struct{ n, maxLen int }{
		{0, 0}, {1, 10}, {251, 1}, {252, 1}, {1000, 8}, {5000, 2}, {24000, 0},
		{40, 32 * 1024}, {200, 16 * 1024}, {64, 64 * 1024}, {600, 4000},
	} {
		props := propsOf(r, c.n, c.maxLen)
		layout, ok := assign(pk, id, props)
		if !ok {
			t.Errorf("%d properties of up to %d: no layout", c.n, c.maxLen)
			continue
		}
		seen := map[string]bool{}
		for _, names := range layout {
			if len(names) == 0 && len(layout) > 1 {
				continue // a bucket the hash left empty is a valid row
			}
			if !slices.IsSorted(names) {
				t.Errorf("row not sorted")
			}
			for _, name := range names {
				if seen[name] {
					t.Fatalf("%s in two rows", name)
				}
				seen[name] = true
			}
		}
		if len(seen) != len(props) {
			t.Errorf("%d of %d properties placed", len(seen), len(props))
		}
		for i, row := range rowsOf(pk, id, props, layout) {
			if err := entity.Validate(row); err != nil {
				t.Errorf("%d properties of up to %d: row %d of %d: %v", c.n, c.maxLen, i, len(layout), err)
			}
		}
		again, _ := assign(pk, id, maps.Clone(props))
		if !slices.EqualFunc(layout, again, slices.Equal) {
			t.Errorf("%d properties: two assignments differ", c.n)
		}
		if c.n > 0 && len(layout) > 1 {
			// Minimal: one row fewer does not fit.
			capP, capS := rowCapacity(pk, id)
			names := slices.Sorted(maps.Keys(props))
			sizes := make([]int, len(names))
			for i, name := range names {
				sizes[i] = propSize(name, props[name])
			}
			if fits(len(layout)-1, names, sizes, make([]int, len(names)), capP, capS) {
				t.Errorf("%d properties in %d rows, but %d fit", c.n, len(layout), len(layout)-1)
			}
		}
	}
	if _, ok := assign(pk, id, propsOf(r, MaxRows*(entity.MaxUserProperties-1)+1, 0)); ok {
		t.Error("more properties than 99 rows hold were assigned")
	}
}

// A change of values that keeps the number of rows changes only the rows
// that hold them; a new property lands in one row.
func TestAssignIsStable(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	props := propsOf(r, 1000, 20)
	before, _ := assign("p", "i", props)
	for name := range props {
		if _, ok := props[name].(int32); ok {
			props[name] = int32(-1)
		}
	}
	props["Added"] = "x"
	after, _ := assign("p", "i", props)
	if len(after) != len(before) {
		t.Fatalf("rows %d → %d", len(before), len(after))
	}
	changed := 0
	for k := range after {
		if !slices.Equal(before[k], after[k]) {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("%d rows changed their names, want 1", changed)
	}
}

func TestRowKeys(t *testing.T) {
	for _, id := range []string{"", "a", "emp 000123", "a!b", "x 01", "é😀"} {
		for _, k := range []int{0, 1, 9, 10, 99} {
			rk := rowKey(id, k)
			got, ok := rowIndex(id, rk)
			if !ok || got != k {
				t.Errorf("rowIndex(%q, %q) = %d, %v", id, rk, got, ok)
			}
			from, to := rowRange(id)
			if rk < from || rk >= to {
				t.Errorf("%q outside [%q, %q)", rk, from, to)
			}
		}
		for _, rk := range []string{id, rowKey(id, 1) + "0", rowKey(id+"x", 1), rowKey(id, 1) + " 1", id + " 1"} {
			if _, ok := rowIndex(id, rk); ok {
				t.Errorf("rowIndex(%q, %q) accepted", id, rk)
			}
		}
	}
}

func TestETagFormat(t *testing.T) {
	for _, c := range []struct {
		n    int
		seq  int64
		head string
	}{{0, 1, "x"}, {99, 1 << 52, `W/"datetime'2024-05-01T10%3A00%3A00.1234567Z'"`}, {5, 17, `"0x8DC;;"`}} {
		s := formatETag(c.n, c.seq, c.head)
		n, seq, head, err := parseETag(s)
		if err != nil || n != c.n || seq != c.seq || head != c.head {
			t.Errorf("parseETag(%q) = %d, %d, %q, %v", s, n, seq, head, err)
		}
	}
	for _, s := range []string{"", "*", "1;2", "1;2;", "100;1;x", "-1;1;x", "01;1;x", "1;0;x", "1;+2;x", "a;1;x", `W/"datetime'2024'"`} {
		if _, _, _, err := parseETag(s); err == nil {
			t.Errorf("parseETag(%q) accepted", s)
		}
	}
}

func TestOutcome(t *testing.T) {
	const seq = 1000
	h := func(cur, born int64, etag string, slots map[int64]string) *head {
		x := &head{seq: cur, born: born, etag: etag}
		for s, tok := range slots {
			x.history[s%historyLen] = tok
		}
		return x
	}
	mine := written{token: "mine", seq: seq, guard: "E0"}
	insert := written{token: "mine", seq: seq, insert: true}
	for _, c := range []struct {
		name string
		h    *head
		w    written
		want verdict
	}{
		{"gone", nil, mine, overtaken},
		{"current", h(seq, 1, "E1", map[int64]string{seq: "mine"}), mine, applied},
		{"replaced since", h(seq+5, 1, "E6", map[int64]string{seq: "mine", seq + 5: "b"}), mine, applied},
		{"another took the version", h(seq+3, 1, "E4", map[int64]string{seq: "other"}), mine, notApplied},
		{"slot reused since", h(seq+historyLen, 1, "E9", map[int64]string{seq + historyLen: "z"}), mine, unknown},
		{"another life", h(77, 70, "F", nil), mine, overtaken},
		{"another life, later numbers", h(seq+2, seq+1, "F", nil), mine, overtaken},
		{"same sequence number, another head", h(seq-1, 1, "F", nil), mine, overtaken},
		{"head unchanged", h(seq-1, 1, "E0", nil), mine, pending},
		{"insert not there", nil, insert, pending},
		{"insert current", h(seq, seq, "E1", map[int64]string{seq: "mine"}), insert, applied},
		{"insert long replaced", h(seq+40, seq, "E2", nil), insert, applied},
		{"insert lost to another", h(5, 5, "F", map[int64]string{5: "other"}), insert, overtaken},
	} {
		if got := outcome(c.h, c.w); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestSameValue(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC)
	g := uuid.New()
	same := [][2]any{{"a", "a"}, {int32(1), int32(1)}, {int64(1), int64(1)}, {0.5, 0.5}, {true, true}, {at, at.In(time.FixedZone("x", 3600))}, {g, g}, {[]byte{1}, []byte{1}}, {[]byte{}, []byte(nil)}}
	differ := [][2]any{{"a", "b"}, {int32(1), int64(1)}, {0.0, negZero()}, {at, at.Add(100)}, {g, uuid.New()}, {[]byte{1}, []byte{2}}, {"1", int32(1)}, {[]byte("a"), "a"}}
	for _, p := range same {
		if !sameValue(p[0], p[1]) {
			t.Errorf("%#v and %#v differ", p[0], p[1])
		}
	}
	for _, p := range differ {
		if sameValue(p[0], p[1]) {
			t.Errorf("%#v and %#v are the same", p[0], p[1])
		}
	}
}

func negZero() float64 { z := 0.0; return -z }
