package denormalize

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSplit cuts fan-outs of every size into messages: each within the
// limit, numbered, and naming between them exactly the targets of the
// whole, in order.
func TestSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 10, 999, 1250, 5000} {
		m := fanout{PK: "departments", RK: "Sales", Targets: map[string]Targets{"b": {}, "a": {Ranges: []Range{{PartitionKey: "Sales", From: "empid ", To: "empid!"}}}}}
		a := m.Targets["a"]
		for i := range n {
			// Keys with characters JSON escapes, of varied lengths.
			rk := fmt.Sprintf("empid %06d <&> \"q\" %s", i, strings.Repeat("é", rng.IntN(40)))
			a.Keys = append(a.Keys, Key{PartitionKey: "Sales", RowKey: rk})
		}
		m.Targets["a"] = a
		parts, err := m.split(maxFanoutPayload)
		if err != nil {
			t.Fatalf("%d keys: %v", n, err)
		}
		whole, _ := json.Marshal(m)
		if len(whole) <= maxFanoutPayload {
			if len(parts) != 1 || parts[0].Parts != 0 {
				t.Errorf("%d keys (%d bytes) fit one message, split into %d", n, len(whole), len(parts))
			}
			continue
		}
		var keys []Key
		var ranges []Range
		seenB := 0
		for i, p := range parts {
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > maxFanoutPayload {
				t.Errorf("%d keys: part %d takes %d bytes", n, i+1, len(b))
			}
			if p.Part != i+1 || p.Parts != len(parts) || p.PK != m.PK || p.RK != m.RK || p.check() != nil {
				t.Errorf("%d keys: part %d is %d of %d for %s/%s", n, i+1, p.Part, p.Parts, p.PK, p.RK)
			}
			keys = append(keys, p.Targets["a"].Keys...)
			ranges = append(ranges, p.Targets["a"].Ranges...)
			if _, ok := p.Targets["b"]; ok {
				seenB++
			}
		}
		if !slices.Equal(keys, m.Targets["a"].Keys) || !slices.Equal(ranges, m.Targets["a"].Ranges) || seenB != 1 {
			t.Errorf("%d keys: the parts name %d keys, %d ranges, relation b %d times", n, len(keys), len(ranges), seenB)
		}
		t.Logf("%d keys, %d bytes: %d messages", n, len(whole), len(parts))
	}
}
