package backup_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// rawRows lists tbl with the raw aztables client (full metadata) in key
// order and
// returns each entity's properties with their annotations, the service's
// metadata (odata.*, Timestamp) left out, as canonical JSON by
// "PartitionKey\x00RowKey".
func rawRows(t *testing.T, tbl *entity.Table[entity.DynamicEntity]) map[string]string {
	t.Helper()
	out := map[string]string{}
	client := env.TableService.NewClient(tbl.Name())
	// Each query starts after the last key read and only its first page
	// is used: aztables drops the empty continuation header Azurite sends
	// for the empty PartitionKey, so its own paging would stop there.
	after := func(pk, rk string) *string {
		q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
		return ptr(fmt.Sprintf("PartitionKey gt %s or (PartitionKey eq %s and RowKey gt %s)", q(pk), q(pk), q(rk)))
	}
	var filter *string
	for {
		var lastPK, lastRK string
		have := false
		pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: ptr(aztables.MetadataFormatFull), Filter: filter})
		page, err := pager.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entities) == 0 {
			if pager.More() {
				t.Fatal("an empty page with a continuation")
			}
			break
		}
		for _, e := range page.Entities {
			var m map[string]any
			dec := json.NewDecoder(bytes.NewReader(e))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil {
				t.Fatal(err)
			}
			for k := range m {
				if strings.HasPrefix(k, "odata.") || k == "Timestamp" || k == "Timestamp@odata.type" {
					delete(m, k)
				}
			}
			key := fmt.Sprint(m["PartitionKey"], "\x00", m["RowKey"])
			if _, dup := out[key]; dup {
				t.Fatalf("the table lists %q twice", key)
			}
			b, err := json.Marshal(m) // map keys sorted
			if err != nil {
				t.Fatal(err)
			}
			out[key] = string(b)
			pk, rk := m["PartitionKey"].(string), m["RowKey"].(string)
			// The page's last key: under the Cosmos DB profile a page
			// comes in another order.
			if c := keys.Compare(pk, lastPK); !have || c > 0 || c == 0 && keys.Compare(rk, lastRK) > 0 {
				lastPK, lastRK, have = pk, rk, true
			}
		}
		filter = after(lastPK, lastRK)
	}
	return out
}

func gzipped(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// One corrupt line among many (hundreds; thousands at full size), of each
// kind a damaged or hand-edited backup holds — bad JSON, an empty line, a
// line without its keys (which must not become the entity with empty
// keys), an unknown or orphaned EDM annotation, a member twice, a String
// over 64 KiB, an invalid key — fails alone with its line and the keys it
// shows; every other entity is stored exactly once with its values (read
// back raw), in both modes; and an import stopped after the segment
// holding the bad lines and resumed from its checkpoint ends with the same
// table. The bad lines sit in three of the six segments: at the start of
// the first's last fifth, at the start of the fourth, and last of all.
func TestImportCorruptLinesAmongMany(t *testing.T) {
	n, seg := sized(3000), sized(500)
	first, mid := sized(400), sized(1500) // where the bad lines start
	rk := func(i int) string { return fmt.Sprintf("%05d", i) }
	bad := map[int]struct{ line, pk, rk string }{
		first:     {`{"PartitionKey":"p1","RowKey":"` + rk(first) + `","N":`, "p1", rk(first)},
		first + 1: {``, "", ""},
		first + 2: {`{"RowKey":"` + rk(first+2) + `","N":402}`, "", rk(first + 2)},
		first + 3: {`{"N":403}`, "", ""},
		first + 4: {`{"PartitionKey":"p0"}`, "p0", ""},
		mid:       {`{"PartitionKey":"p0","RowKey":"` + rk(mid) + `","N@odata.type":"Edm.Decimal","N":"1500"}`, "p0", rk(mid)},
		mid + 1:   {`{"PartitionKey":"p1","RowKey":"` + rk(mid+1) + `","N@odata.type":"Edm.Int64"}`, "p1", rk(mid + 1)},
		mid + 2:   {`{"PartitionKey":"p2","RowKey":"` + rk(mid+2) + `","N":1502,"N":7}`, "p2", rk(mid + 2)},
		mid + 3:   {`{"PartitionKey":"p0","RowKey":"` + rk(mid+3) + `","PartitionKey":"p1","N":1503}`, "p0", rk(mid + 3)},
		mid + 4:   {`{"PartitionKey":"p1","RowKey":"` + rk(mid+4) + `","S":"` + strings.Repeat("x", 40_000) + `"}`, "p1", rk(mid + 4)},
		mid + 5:   {`{"PartitionKey":"p2","RowKey":"` + rk(mid+5) + `","N@odata.type":"Edm.Int64","N":"x"}`, "p2", rk(mid + 5)},
		mid + 6:   {`{"PartitionKey":"p0","RowKey":null,"N":1506}`, "p0", ""},
		mid + 7:   {`{"PartitionKey":null,"RowKey":"` + rk(mid+7) + `","N":1507}`, "", rk(mid + 7)},
		mid + 8:   {`{"PartitionKey":"p2","RowKey":"` + rk(mid+8) + `"` + manyProps(253) + `}`, "p2", rk(mid + 8)},
		n - 1:     {`{"PartitionKey":"p1","RowKey":"a#b","N":2999}`, "p1", "a#b"},
	}
	var body strings.Builder
	body.WriteString(`{"tablekit.backup":1}` + "\n")
	want := map[string]string{}
	for i := range n {
		if b, ok := bad[i]; ok {
			body.WriteString(b.line + "\n")
			continue
		}
		pk, rk := fmt.Sprintf("p%d", i%3), fmt.Sprintf("%05d", i)
		fmt.Fprintf(&body, `{"PartitionKey":%q,"RowKey":%q,"N":%d,"S":"v%d"}`+"\n", pk, rk, i, i)
		want[pk+"\x00"+rk] = fmt.Sprintf(`{"N":%d,"PartitionKey":%q,"RowKey":%q,"S":"v%d"}`, i, pk, rk, i)
	}
	data := gzipped(body.String())
	wantLines := slices.Sorted(maps.Keys(bad))
	check := func(t *testing.T, dst *entity.Table[entity.DynamicEntity], sum backup.ImportSummary, err error, written int64) {
		t.Helper()
		var ie *backup.ImportError
		if !errors.As(err, &ie) || ie.Failed != len(bad) || len(sum.Conflicts) != 0 {
			t.Fatalf("import: %v, want %d failed", err, len(bad))
		}
		var got []int
		for _, f := range sum.Failed {
			i := f.Line - 2
			got = append(got, i)
			if b := bad[i]; f.PartitionKey != b.pk || f.RowKey != b.rk {
				t.Errorf("line %d reported with keys %q %q, want %q %q: %v", f.Line, f.PartitionKey, f.RowKey, b.pk, b.rk, f.Err)
			}
		}
		if !slices.Equal(got, wantLines) {
			t.Errorf("failed lines (0-based entities) %v, want %v", got, wantLines)
		}
		if sum.Written != written || sum.Entities != int64(n) {
			t.Errorf("summary %d written of %d, want %d of %d", sum.Written, sum.Entities, written, n)
		}
		if got := rawRows(t, dst); !maps.Equal(got, want) {
			for k, v := range got {
				if want[k] != v {
					t.Errorf("stored %q: %.200s, want %.200s", k, v, want[k])
					break
				}
			}
			t.Fatalf("the table holds %d entities, want the %d good ones", len(got), len(want))
		}
	}
	for _, mode := range []backup.Mode{backup.Upsert, backup.Insert} {
		t.Run(fmt.Sprint("mode ", mode), func(t *testing.T) {
			dst := newTable(t)
			sum, err := backup.Import(t.Context(), dst, bytes.NewReader(data), backup.ImportOptions{Mode: mode, SegmentEntities: seg})
			check(t, dst, sum, err, int64(len(want)))

			// Stopped after the segment of the second group of bad
			// lines, resumed.
			dst = newTable(t)
			var last int64
			_, err = backup.Import(t.Context(), dst, bytes.NewReader(data), backup.ImportOptions{Mode: mode, SegmentEntities: seg,
				Checkpoint: func(c backup.ImportCheckpoint) error {
					if c.Entities > int64(mid) {
						return errCrash
					}
					last = c.Entities
					return nil
				}})
			if !errors.Is(err, errCrash) || last != int64(mid) {
				t.Fatalf("stopped import: %v at %d", err, last)
			}
			sum, err = backup.Import(t.Context(), dst, bytes.NewReader(data), backup.ImportOptions{Mode: mode, SegmentEntities: seg, ResumeAfter: last})
			var ie *backup.ImportError
			if !errors.As(err, &ie) {
				t.Fatalf("resumed import: %v", err)
			}
			for _, f := range sum.Failed {
				if f.Line-2 < mid {
					t.Errorf("the resumed import reports line %d, before its ResumeAfter", f.Line)
				}
			}
			if got := rawRows(t, dst); !maps.Equal(got, want) {
				t.Fatalf("after a resumed import the table holds %d entities, want %d", len(got), len(want))
			}
		})
	}
}

// manyProps is n members P000… of a JSON object, each with a leading comma.
func manyProps(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `,"P%03d":%d`, i, i)
	}
	return b.String()
}
