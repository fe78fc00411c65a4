package backup_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/faults"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// full reports whether the tests run at full size (TABLEKIT_FULL=1):
// thousands of entities, over the service's own pages of 1,000. Without
// it the same tests meet the same page and segment boundaries with a
// tenth of the data: the service ends its pages after pageSize entities
// (paged) and segments are a tenth as long (sized).
func full() bool { return os.Getenv("TABLEKIT_FULL") == "1" }

// pageSize is the most entities per page that paged's clients get back.
const pageSize = 100

// sized is n at full size, else n/10: a count of entities, a segment
// length or a line number that scales with the service's page.
func sized(n int) int {
	if full() {
		return n
	}
	return n / 10
}

// paged is tbl read through clients whose service ends each query page
// after pageSize entities instead of 1,000 (faults.ShortPages); at full
// size, tbl itself.
func paged(t *testing.T, tbl *entity.Table[entity.DynamicEntity]) *entity.Table[entity.DynamicEntity] {
	t.Helper()
	if full() {
		return tbl
	}
	return viewOf(t, pagedEnv(env), tbl.Name())
}

// pagedEnv is e whose service ends each query page after pageSize
// entities; at full size, e itself.
func pagedEnv(e *integration.Env) *integration.Env {
	if full() {
		return e
	}
	return e.With(faults.ShortPages{N: pageSize})
}

func newTable(t *testing.T) *entity.Table[entity.DynamicEntity] {
	t.Helper()
	tbl, err := entity.NewTable[entity.DynamicEntity](env.Table(t))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// awkwardKeys are keys that break naive tools: empty, quotes, unicode,
// spaces, characters that need escaping in URLs and CSV.
var awkwardKeys = []string{"", "'", "O'Brien", "Ü'p k", "a,b", `"q"`, "semi;colon", "日本", "z"}

// entityN is entity i of a table of every EDM type, with awkward keys.
func entityN(i int) entity.DynamicEntity {
	pk := awkwardKeys[i%len(awkwardKeys)]
	d := entity.DynamicEntity{PartitionKey: pk, RowKey: fmt.Sprintf("%s-%06d", awkwardKeys[(i/len(awkwardKeys))%len(awkwardKeys)], i)}
	d.Set("S", fmt.Sprintf("text %d, \"quoted\"\nnew line", i))
	d.Set("I32", int32(i-500))
	d.Set("I64", int64(i)*1e12)
	d.Set("D", float64(i)) // whole numbers must stay Double
	d.Set("Frac", float64(i)+0.25)
	d.Set("B", i%2 == 0)
	d.Set("T", time.Date(2026, 1, 2, 3, 4, 5, 1234500, time.UTC).Add(time.Duration(i)*time.Second))
	d.Set("G", uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprint(i))))
	d.Set("Bin", []byte{byte(i), 0, 255, byte(i >> 8)})
	if i%7 == 0 {
		d.Set("Sparse", "only some")
		d.Set("Special", math.Inf(1))
	}
	return d
}

func load(t *testing.T, tbl *entity.Table[entity.DynamicEntity], n int) {
	t.Helper()
	ents := make([]entity.DynamicEntity, n)
	for i := range ents {
		ents[i] = entityN(i)
	}
	if _, err := tbl.BulkWrite(t.Context(), ents, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
}

func export(t *testing.T, tbl *entity.Table[entity.DynamicEntity], opts backup.ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := backup.Export(t.Context(), tbl, &buf, opts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func lines(t *testing.T, b []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(all), "\n"), "\n")
}

// Export → import into an empty table → export gives the same bytes, with
// every EDM type and awkward keys, over three pages of the service and
// several segments; ranges read in parallel change nothing.
func TestRoundTripIsByteIdentical(t *testing.T) {
	n := sized(3000)
	seg := sized(700)
	src := newTable(t)
	load(t, src, n)
	first := export(t, paged(t, src), backup.ExportOptions{SegmentEntities: seg})
	if got := len(lines(t, first)); got != n+1 {
		t.Fatalf("backup has %d lines, want header + %d", got, n)
	}
	if l := lines(t, first)[0]; l != `{"tablekit.backup":1}` {
		t.Fatalf("header %q", l)
	}
	dst := newTable(t)
	sum, err := backup.Import(t.Context(), paged(t, dst), bytes.NewReader(first), backup.ImportOptions{Mode: backup.Insert})
	if err != nil || sum.Written != int64(n) || sum.Entities != int64(n) {
		t.Fatalf("import: %+v, %v", sum, err)
	}
	second := export(t, paged(t, dst), backup.ExportOptions{SegmentEntities: seg})
	if !bytes.Equal(first, second) {
		t.Fatalf("second export differs from the first (%d vs %d bytes)", len(first), len(second))
	}
	// The same table in four ranges read in parallel: the same lines.
	ranged := export(t, paged(t, dst), backup.ExportOptions{SegmentEntities: seg, Parallel: 3,
		Ranges: []backup.Range{{To: "'"}, {From: "'", To: "a"}, {From: "a", To: "z"}, {From: "z"}}})
	if a, b := lines(t, first), lines(t, ranged); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("ranged export has other lines (%d vs %d)", len(a), len(b))
	}
	// Every type came back as itself.
	got, err := dst.Get(t.Context(), entityN(7).PartitionKey, entityN(7).RowKey)
	if err != nil {
		t.Fatal(err)
	}
	want := entityN(7)
	for name, v := range want.Properties {
		if fmt.Sprintf("%T %v", got.Properties[name], got.Properties[name]) != fmt.Sprintf("%T %v", v, v) {
			t.Errorf("%s: got %T %v, want %T %v", name, got.Properties[name], got.Properties[name], v, v)
		}
	}
}

var errCrash = errors.New("crash")

// An export killed after k checkpoints, for several k, resumed from its
// last checkpoint with the output cut to its byte count, ends with the
// bytes of an export that did not crash.
func TestExportResumesAfterACrash(t *testing.T) {
	n, seg := sized(1000), sized(90)
	src := newTable(t)
	load(t, src, n)
	src = paged(t, src)
	ranges := []backup.Range{{To: "O"}, {From: "O", To: "a"}, {From: "a"}}
	whole := export(t, src, backup.ExportOptions{SegmentEntities: seg, Ranges: ranges})
	for _, k := range []int{1, 2, 4, 7, 11} {
		t.Run(fmt.Sprintf("after %d segments", k), func(t *testing.T) {
			var out bytes.Buffer
			var last backup.Checkpoint
			seen := 0
			_, err := backup.Export(t.Context(), src, &out, backup.ExportOptions{SegmentEntities: seg, Ranges: ranges,
				Checkpoint: func(c backup.Checkpoint) error {
					seen++
					if seen > k {
						// Crash after writing the segment, before recording it.
						return errCrash
					}
					last = c
					return nil
				}})
			if !errors.Is(err, errCrash) {
				t.Fatalf("crashed run: %v", err)
			}
			out.Truncate(int(last.Bytes))
			sum, err := backup.Export(t.Context(), src, &out, backup.ExportOptions{SegmentEntities: seg, Ranges: ranges, Resume: last.Token})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Entities != int64(n) || sum.Bytes != int64(out.Len()) {
				t.Errorf("summary %+v, output %d bytes", sum, out.Len())
			}
			if a, b := lines(t, whole), lines(t, out.Bytes()); strings.Join(a, "\n") != strings.Join(b, "\n") {
				t.Fatalf("resumed export has %d lines, the whole one %d", len(b), len(a))
			}
		})
	}
}

// An import killed after k segments — the segment written, its checkpoint
// not recorded — resumed from the last checkpoint in Insert mode, ends
// with every entity once; replayed ones count as existing, not conflicts.
func TestImportResumesAfterACrash(t *testing.T) {
	n, seg := int64(sized(600)), sized(100)
	src := newTable(t)
	load(t, src, int(n))
	data := export(t, src, backup.ExportOptions{})
	for _, k := range []int{0, 1, 3, 5} {
		t.Run(fmt.Sprintf("after %d segments", k), func(t *testing.T) {
			dst := newTable(t)
			var done int64
			seen := 0
			_, err := backup.Import(t.Context(), dst, bytes.NewReader(data), backup.ImportOptions{Mode: backup.Insert, SegmentEntities: seg,
				Checkpoint: func(c backup.ImportCheckpoint) error {
					seen++
					if seen > k {
						return errCrash
					}
					done = c.Entities
					return nil
				}})
			if !errors.Is(err, errCrash) {
				t.Fatalf("crashed run: %v", err)
			}
			sum, err := backup.Import(t.Context(), dst, bytes.NewReader(data), backup.ImportOptions{Mode: backup.Insert, SegmentEntities: seg, ResumeAfter: done})
			if err != nil {
				t.Fatalf("resumed import: %+v %v", sum, err)
			}
			if replayed := int64(seg); sum.Existing != replayed || sum.Written != n-done-replayed || sum.Entities != n {
				t.Errorf("resumed import %+v, want %d existing (the replayed segment) and %d written", sum, replayed, n-done-replayed)
			}
			if again := export(t, dst, backup.ExportOptions{}); !bytes.Equal(again, data) {
				t.Fatal("the table after a resumed import exports other bytes")
			}
		})
	}
}

// In Insert mode an entity stored with other properties is a conflict,
// named with its keys and line, and left as it is; the others are written.
func TestImportInsertReportsConflictsAndWritesTheRest(t *testing.T) {
	src := newTable(t)
	load(t, src, 50)
	data := export(t, src, backup.ExportOptions{})
	dst := newTable(t)
	other := entityN(3)
	other.Set("S", "changed")
	if err := dst.Insert(t.Context(), &other); err != nil {
		t.Fatal(err)
	}
	sum, err := backup.Import(t.Context(), dst, bytes.NewReader(data), backup.ImportOptions{Mode: backup.Insert})
	var ie *backup.ImportError
	if !errors.As(err, &ie) || ie.Conflicts != 1 || len(sum.Conflicts) != 1 {
		t.Fatalf("import: %+v, %v", sum, err)
	}
	if c := sum.Conflicts[0]; c.PartitionKey != other.PartitionKey || c.RowKey != other.RowKey || c.Line < 2 {
		t.Errorf("conflict %+v, want keys %q %q", c, other.PartitionKey, other.RowKey)
	}
	if sum.Written != 49 {
		t.Errorf("written %d, want 49", sum.Written)
	}
	got, err := dst.Get(t.Context(), other.PartitionKey, other.RowKey)
	if err != nil || got.Properties["S"] != "changed" {
		t.Fatalf("the conflicting entity was overwritten: %v %v", got.Properties["S"], err)
	}
}

// Input that is not a backup, or a stream that breaks off, is refused with
// the line, and nothing of the damaged part is written; a line that does
// not decode fails alone, named with its line and keys, and the lines
// around it are written.
func TestImportRefusesMalformedInput(t *testing.T) {
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	const head = `{"tablekit.backup":1}` + "\n"
	cases := map[string]struct {
		in      []byte
		line    int
		written int  // entities written
		alone   bool // the line fails alone (an *ImportError), not the stream
	}{
		"not gzip":        {[]byte("plain"), 1, 0, false},
		"empty":           {gz(""), 1, 0, false},
		"other header":    {gz(`{"x":1}` + "\n"), 1, 0, false},
		"no final end":    {gz(head + `{"PartitionKey":"p","RowKey":"1"}`), 2, 0, false},
		"bad line":        {gz(head + `{"PartitionKey":"p","RowKey":"1"}` + "\n" + `{"PartitionKey":"p","RowKey":"2",` + "\n" + `{"PartitionKey":"p","RowKey":"3"}` + "\n"), 3, 2, true},
		"wrong type note": {gz(head + `{"PartitionKey":"p","RowKey":"2","N":"x","N@odata.type":"Edm.Int64"}` + "\n" + `{"PartitionKey":"p","RowKey":"3"}` + "\n"), 2, 1, true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dst := newTable(t)
			_, err := backup.Import(t.Context(), dst, bytes.NewReader(c.in), backup.ImportOptions{})
			var le *backup.LineError
			if !errors.As(err, &le) || le.Line != c.line || !errors.Is(err, backup.ErrFormat) {
				t.Fatalf("err = %v, want a LineError at line %d", err, c.line)
			}
			var ie *backup.ImportError
			if c.alone != errors.As(err, &ie) {
				t.Fatalf("err = %v: want the line to fail alone: %v", err, c.alone)
			}
			if c.alone {
				var ee *backup.EntityError
				if !errors.As(err, &ee) || ee.PartitionKey != "p" || ee.RowKey != "2" || ee.Line != c.line {
					t.Errorf("err = %v, want the line's keys p/2", err)
				}
			}
			if n := count(t, dst); n != c.written {
				t.Errorf("%d entities written, want %d", n, c.written)
			}
		})
	}
}

// count is the number of entities in tbl, read with the raw client.
func count(t *testing.T, tbl *entity.Table[entity.DynamicEntity]) int {
	t.Helper()
	n := 0
	pager := env.TableService.NewClient(tbl.Name()).NewListEntitiesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Entities)
	}
	return n
}

func TestOptionsAreCheckedBeforeAnyRequest(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t)
	for name, opts := range map[string]backup.ExportOptions{
		"negative parallel": {Parallel: -1},
		"inverted range":    {Ranges: []backup.Range{{From: "b", To: "a"}}},
		"bad token":         {Resume: "%%%"},
		"token of 2 ranges": {Resume: tokenOf(t, tbl, 2)},
	} {
		if _, err := backup.Export(ctx, tbl, io.Discard, opts); !errors.Is(err, backup.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, err := backup.Import(ctx, tbl, strings.NewReader(""), backup.ImportOptions{Mode: 7}); !errors.Is(err, backup.ErrInvalid) {
		t.Errorf("bad mode: %v", err)
	}
}

func tokenOf(t *testing.T, tbl *entity.Table[entity.DynamicEntity], ranges int) string {
	var tok string
	rs := make([]backup.Range, ranges)
	for i := range rs {
		rs[i] = backup.Range{From: fmt.Sprint(i), To: fmt.Sprint(i + 1)}
	}
	_, err := backup.Export(t.Context(), tbl, io.Discard, backup.ExportOptions{Ranges: rs, Checkpoint: func(c backup.Checkpoint) error { tok = c.Token; return nil }})
	if err != nil || tok == "" {
		t.Fatalf("token: %v", err)
	}
	return tok
}
