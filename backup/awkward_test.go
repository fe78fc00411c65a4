package backup_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

// extremes is a table of every EDM type at its limits, with keys that
// need escaping in URLs, filters, JSON and CSV.
func extremes(t *testing.T) *entity.Table[entity.DynamicEntity] {
	t.Helper()
	bin := make([]byte, 64<<10)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	doubles := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, math.MaxFloat64, -math.MaxFloat64,
		math.SmallestNonzeroFloat64, 0.1, 1e21, 1e-7, 123456789012345680, 3, -2.5}
	times := []time.Time{
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC),
		time.Date(2026, 11, 27, 8, 0, 0, 123456700, time.UTC),
		time.Date(2000, 2, 29, 12, 0, 0, 100, time.UTC),
	}
	strs := []string{"", " ", "a\r\nb", "\r", "\n\n", "tab\there", "nul\x00byte", "\"quoted\", comma", "😀 surrogate pair", "\uffff\ufffe", "\u2028\u2029",
		strings.Repeat("😀", 16384), "=cmd|' /C calc'!A0", "Edm.Int64", "\ufeffbom"}
	pks := []string{"", "'", "''", "%", "%25", "+ &=;", "Ü", "😀", "\uffff", "a\"b", "O'Brien", strings.Repeat("k", 512)}
	var ents []entity.DynamicEntity
	for i, pk := range pks {
		for j, rk := range []string{"", "'", "%2F", "😀\uffff", "x y", fmt.Sprintf("r%d", i)} {
			d := entity.DynamicEntity{PartitionKey: pk, RowKey: rk}
			k := i*6 + j
			d.Set("I32", []int32{math.MinInt32, math.MaxInt32, 0, -1}[k%4])
			d.Set("I64", []int64{math.MinInt64, math.MaxInt64, 0, 1 << 53, -(1 << 53) - 1}[k%5])
			d.Set("D", doubles[k%len(doubles)])
			d.Set("T", times[k%len(times)])
			d.Set("G", []uuid.UUID{uuid.Nil, uuid.NewSHA1(uuid.NameSpaceURL, []byte(pk+rk)), uuid.Max}[k%3])
			d.Set("S", strs[k%len(strs)])
			d.Set("B", k%2 == 0)
			switch {
			case k%24 == 0: // three entities, under "", "+ &=;" and U+FFFF
				d.Set("Bin", bin)
			case k%3 == 0:
				d.Set("Bin", bin[:k])
			case k%3 == 1:
				d.Set("Bin", []byte{})
			}
			if k%4 == 0 {
				d.Set("Empty", "")
			}
			ents = append(ents, d)
		}
	}
	tbl := newTable(t)
	if _, err := tbl.BulkWrite(t.Context(), ents, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	return tbl
}

// Every EDM type at its extremes — Int32 and Int64 minimum and maximum,
// Double NaN, ±Inf, -0 and its largest and smallest, DateTime of 1601 and
// 9999 with seven fractional digits, Guid nil and max, a 64 KiB Binary
// and an empty one, empty Strings, CR LF, NUL, U+FFFF, surrogate pairs, a
// String of 32 K UTF-16 code units — under keys that need escaping: an
// export imported into an empty table holds exactly the entities of the
// source (read back raw), and exports the same bytes; the same through
// Storage Explorer's CSV.
func TestExtremesRoundTrip(t *testing.T) {
	src := extremes(t)
	want := rawRows(t, src)
	first := export(t, src, backup.ExportOptions{SegmentEntities: 10})
	for _, mode := range []backup.Mode{backup.Upsert, backup.Insert} {
		dst := newTable(t)
		if sum, err := backup.Import(t.Context(), dst, bytes.NewReader(first), backup.ImportOptions{Mode: mode}); err != nil || sum.Written != int64(len(want)) {
			t.Fatalf("import mode %d: %+v %v", mode, sum, err)
		}
		if got := rawRows(t, dst); !maps.Equal(got, want) {
			diff(t, "backup", got, want)
		}
		if second := export(t, dst, backup.ExportOptions{SegmentEntities: 10}); !bytes.Equal(first, second) {
			t.Errorf("mode %d: the second export differs from the first", mode)
		}
	}
	var csvOut bytes.Buffer
	if err := backup.ExportCSV(t.Context(), src, &csvOut, filter.Expr{}); err != nil {
		t.Fatal(err)
	}
	// Imported in Insert mode into the table they came from, every entity
	// is found stored with its very values: none is a conflict.
	for name, again := range map[string]func() (backup.ImportSummary, error){
		"backup": func() (backup.ImportSummary, error) {
			return backup.Import(t.Context(), src, bytes.NewReader(first), backup.ImportOptions{Mode: backup.Insert})
		},
		"CSV": func() (backup.ImportSummary, error) {
			return backup.ImportCSV(t.Context(), src, bytes.NewReader(csvOut.Bytes()), backup.ImportOptions{Mode: backup.Insert})
		},
	} {
		if sum, err := again(); err != nil || sum.Existing != int64(len(want)) {
			t.Errorf("%s into its own table: %d existing, %d conflicts (first %v), %v; want all %d existing", name, sum.Existing, len(sum.Conflicts), sum.Conflicts, err, len(want))
		}
	}
	dst := newTable(t)
	if sum, err := backup.ImportCSV(t.Context(), dst, bytes.NewReader(csvOut.Bytes()), backup.ImportOptions{Mode: backup.Insert}); err != nil || sum.Written != int64(len(want)) {
		t.Fatalf("CSV import: %+v %v", sum, err)
	}
	if got := rawRows(t, dst); !maps.Equal(got, want) {
		diff(t, "CSV", got, want)
	}
}

func diff(t *testing.T, how string, got, want map[string]string) {
	t.Helper()
	n := 0
	for k, w := range want {
		if g := got[k]; g != w && n < 3 {
			n++
			if len(g) > 300 || len(w) > 300 {
				for i := range min(len(g), len(w)) {
					if g[i] != w[i] {
						g, w = g[max(0, i-80):min(len(g), i+80)], w[max(0, i-80):min(len(w), i+80)]
						break
					}
				}
			}
			t.Errorf("%s: %q stored as\n%q\nwant\n%q", how, k, g, w)
		}
	}
	t.Fatalf("%s: the table differs from the source (%d entities, want %d)", how, len(got), len(want))
}

// More than two pages of entities under the empty PartitionKey (whose
// continuation Azurite sends as an empty header, which aztables drops):
// Export, an export resumed at each checkpoint, and ExportCSV each hold
// every entity once, and an import holds them all (counted raw).
func TestExportPagesOfTheEmptyPartitionKey(t *testing.T) {
	n := sized(2300)
	src := newTable(t)
	ents := make([]entity.DynamicEntity, n)
	for i := range ents {
		ents[i] = entity.DynamicEntity{PartitionKey: "", RowKey: fmt.Sprintf("%05d", i)}
		ents[i].Set("N", int32(i))
	}
	ents = append(ents, entity.DynamicEntity{PartitionKey: "a", RowKey: ""})
	if _, err := src.BulkWrite(t.Context(), ents, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	src = paged(t, src)
	opts := backup.ExportOptions{SegmentEntities: sized(700)}
	whole := export(t, src, opts)
	if got := len(lines(t, whole)); got != n+2 {
		t.Fatalf("the export has %d lines, want header + %d", got, n+1)
	}
	var tokens []backup.Checkpoint
	o := opts
	o.Checkpoint = func(c backup.Checkpoint) error { tokens = append(tokens, c); return nil }
	export(t, src, o)
	for _, c := range tokens {
		out := bytes.NewBuffer(bytes.Clone(whole[:c.Bytes]))
		o := opts
		o.Resume = c.Token
		if _, err := backup.Export(t.Context(), src, out, o); err != nil || !bytes.Equal(out.Bytes(), whole) {
			t.Fatalf("resumed after %d entities: %v, %d lines", c.Entities, err, len(lines(t, out.Bytes())))
		}
	}
	var csvOut bytes.Buffer
	if err := backup.ExportCSV(t.Context(), src, &csvOut, filter.Expr{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(csvOut.String(), "\n"); got != n+2 {
		t.Fatalf("the CSV has %d lines, want header + %d", got, n+1)
	}
	dst := newTable(t)
	if _, err := backup.Import(t.Context(), dst, bytes.NewReader(whole), backup.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := len(rawRows(t, dst)); got != n+1 {
		t.Fatalf("the imported table holds %d entities, want %d", got, n+1)
	}
}

// The resume token ExportBlob keeps in the blob's metadata stays within
// the 8 KiB the service allows a blob's metadata even for the longest keys
// whose characters JSON could escape (512 UTF-16 code units of '&', '<',
// '>' in each key): the export to a blob completes, every checkpoint's
// token fits, and the blob is the export.
func TestExportBlobTokenFitsTheMetadataLimit(t *testing.T) {
	src := newTable(t)
	rk := 512
	if env.Cosmos() {
		rk = 85 // the profile's RowKeys are at most 255 bytes
	}
	var ents []entity.DynamicEntity
	for _, c := range []string{"&", "<", ">", "日"} {
		d := entity.DynamicEntity{PartitionKey: strings.Repeat(c, 512), RowKey: strings.Repeat(c, rk)}
		d.Set("S", c)
		ents = append(ents, d)
	}
	if _, err := src.BulkWrite(t.Context(), ents, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := backup.ExportOptions{SegmentEntities: 1}
	bb := env.Container(t).NewBlockBlobClient("long-keys.gz")
	longest := 0
	o := opts
	o.Checkpoint = func(c backup.Checkpoint) error { longest = max(longest, len(c.Token)); return nil }
	if _, err := backup.ExportBlob(t.Context(), src, bb, o); err != nil {
		t.Fatal(err)
	}
	if n := longest + len(backup.MetadataToken); n > 8<<10 {
		t.Errorf("a token and its metadata name take %d bytes, more than the 8 KiB of a blob's metadata", n)
	}
	if got, _, _ := blobBytes(t, bb); !bytes.Equal(got, export(t, src, opts)) {
		t.Fatal("the blob is not the export")
	}
}

// Entities that Azurite (like Cosmos DB) stores but the service's rules,
// which tablekit checks before a write, refuse — a DateTime before 1601, a
// property name that is not a C# identifier — do not stop Export: the
// backup holds every stored entity, Summary.Invalid names those with their
// lines and keys, and an import of it writes every other entity and
// reports each of those failed alone.
func TestExportKeepsStoredEntitiesAWriteWouldRefuse(t *testing.T) {
	src := newTable(t)
	load(t, src, 300)
	raw := env.TableService.NewClient(src.Name())
	odd := map[string]string{
		"old-1": `{"PartitionKey":"z","RowKey":"old-1","T@odata.type":"Edm.DateTime","T":"1500-01-01T00:00:00Z"}`,
		"old-2": `{"PartitionKey":"z","RowKey":"old-2","T@odata.type":"Edm.DateTime","T":"0001-01-01T00:00:00Z","S":"x"}`,
		"dash":  `{"PartitionKey":"a,b","RowKey":"dash","a-b":"x"}`,
		"digit": `{"PartitionKey":"a,b","RowKey":"digit","1x":"x"}`,
	}
	for _, body := range odd {
		if _, err := raw.AddEntity(t.Context(), []byte(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	sum, err := backup.Export(t.Context(), src, &out, backup.ExportOptions{SegmentEntities: 50})
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	ls := lines(t, out.Bytes())
	if sum.Entities != 304 || len(ls) != 305 {
		t.Fatalf("export: %+v, %d lines, want 304 entities", sum, len(ls))
	}
	if len(sum.Invalid) != len(odd) {
		t.Fatalf("Summary.Invalid %+v, want the %d entities a write refuses", sum.Invalid, len(odd))
	}
	for _, e := range sum.Invalid {
		if _, ok := odd[e.RowKey]; !ok || !errors.Is(e.Err, entity.ErrInvalid) || !strings.Contains(ls[e.Line-1], `"RowKey":"`+e.RowKey+`"`) {
			t.Errorf("Summary.Invalid names %+v", e)
		}
	}
	dst := newTable(t)
	isum, err := backup.Import(t.Context(), dst, bytes.NewReader(out.Bytes()), backup.ImportOptions{})
	var ie *backup.ImportError
	if !errors.As(err, &ie) || ie.Failed != len(odd) || isum.Written != 300 {
		t.Fatalf("import: %+v %v, want 300 written and %d failed", isum, err, len(odd))
	}
	for _, f := range isum.Failed {
		if _, ok := odd[f.RowKey]; !ok || !errors.Is(f.Err, entity.ErrInvalid) {
			t.Errorf("import failure %+v", f)
		}
	}
	want := rawRows(t, src)
	for rk, body := range odd {
		var k struct{ PartitionKey string }
		if err := json.Unmarshal([]byte(body), &k); err != nil {
			t.Fatal(err)
		}
		delete(want, k.PartitionKey+"\x00"+rk)
	}
	if got := rawRows(t, dst); !maps.Equal(got, want) {
		t.Fatalf("the imported table holds %d entities, want the source's %d others", len(got), len(want))
	}
}
