package wide

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// The logical ETag is read back from users: any string is refused or
// parsed into what formats back to it.
func FuzzETag(f *testing.F) {
	f.Add(`5;17;W/"datetime'2024-05-01T10%3A00%3A00.1234567Z'"`)
	f.Fuzz(func(t *testing.T, s string) {
		n, seq, head, err := parseETag(s)
		if err != nil {
			return
		}
		if got := formatETag(n, seq, head); got != s {
			t.Fatalf("parseETag(%q) formats back as %q", s, got)
		}
	})
}

// Row keys are parsed back from whatever a range query returns: only the
// keys rowKey makes are taken as rows, and they parse to their number.
func FuzzRowIndex(f *testing.F) {
	f.Add("emp 000123", "emp! 000123 01", 7)
	f.Fuzz(func(t *testing.T, id, rk string, k int) {
		if got, ok := rowIndex(id, rk); ok && (got < 0 || got > MaxRows || rowKey(id, got) != rk) {
			t.Fatalf("rowIndex(%q, %q) = %d, but rowKey gives %q", id, rk, got, rowKey(id, got))
		}
		k = ((k % (MaxRows + 1)) + MaxRows + 1) % (MaxRows + 1)
		if got, ok := rowIndex(id, rowKey(id, k)); !ok || got != k {
			t.Fatalf("rowIndex(%q, rowKey(%d)) = %d, %v", id, k, got, ok)
		}
		from, to := rowRange(id)
		if rk := rowKey(id, k); keys.Compare(rk, from) < 0 || keys.Compare(rk, to) >= 0 {
			t.Fatalf("row %d of %q outside its range", k, id)
		}
	})
}

// The assignment of properties to rows: every row within the service's
// limits by the codec's own checks, every property in one row, the same
// rows every time.
func FuzzAssign(f *testing.F) {
	f.Add(uint16(1000), uint16(8), uint64(1), "Sales", "000123")
	f.Add(uint16(40), uint16(40000), uint64(2), "p", "i")
	f.Fuzz(func(t *testing.T, n, maxLen uint16, seed uint64, pk, id string) {
		if checkKeys(pk, id) != nil {
			return
		}
		props := propsOf(rand.New(rand.NewPCG(seed, 0)), int(n%3000), int(maxLen))
		layout, ok := assign(pk, id, props)
		if !ok {
			return
		}
		placed := 0
		for i, row := range rowsOf(pk, id, props, layout) {
			if err := entity.Validate(row); err != nil {
				t.Fatalf("row %d: %v", i, err)
			}
			if i > 0 {
				placed += len(row.Properties) - 1
			}
		}
		if placed != len(props) {
			t.Fatalf("%d of %d properties placed", placed, len(props))
		}
	})
}

// The rows a read returns are checked, whatever they hold: assemble never
// panics, and what it accepts is one version, each row of the version the
// head lists for it.
func FuzzAssemble(f *testing.F) {
	f.Add("t0 t1", int32(2), int64(5), int64(3), "t0", "01:t0;02:t1")
	f.Add("t0 t1", int32(2), int64(5), int64(3), "t0", "01:t0;02:t2")
	f.Add("", int32(0), int64(1), int64(1), "a", "")
	f.Add("x", int32(1), int64(20), int64(1), "x", "01:x;02:x;1:x;01 1:x")
	f.Fuzz(func(t *testing.T, manifest string, n int32, seq, born int64, version, spec string) {
		head := (&entity.DynamicEntity{PartitionKey: "p", RowKey: rowKey("id", 0), ETag: `W/"1"`}).
			Set(propVersion, version).Set(propSeq, seq).Set(propBorn, born).Set(propRows, n).Set(propManifest, manifest)
		if seq > 0 {
			head.Set(historyProp(seq), version)
		}
		rows := []entity.DynamicEntity{*head}
		for i, s := range strings.Split(spec, ";") {
			k, token, _ := strings.Cut(s, ":")
			r := (&entity.DynamicEntity{PartitionKey: "p", RowKey: keys.Compound("id", k)}).Set(propVersion, token).Set("P"+string(rune('a'+i%26)), k)
			rows = append(rows, *r)
		}
		st, err := assemble("p", "id", rows)
		if err != nil {
			return
		}
		if len(st.rows) != int(n) || len(st.head.tokens) != int(n) {
			t.Fatalf("accepted %d rows for a head of %d", len(st.rows), n)
		}
		for k, r := range st.rows {
			if r.version != st.head.tokens[k] {
				t.Fatalf("row %d of version %q accepted, the head lists %q", k+1, r.version, st.head.tokens[k])
			}
		}
		bag := st.bag()
		if _, _, _, err := parseETag(bag.ETag); err != nil {
			t.Fatalf("bag's ETag %q does not parse", bag.ETag)
		}
	})
}
