package backup_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
)

// Every argument and option that cannot work is refused with an error
// matching ErrInvalid and entity.ErrInvalid, without a panic and before
// any request reaches the service (counted by a policy on the table's and
// the blob's clients): nil tables, writers, readers and blobs, negative
// numbers, inverted or empty ranges, a filter that does not build, a
// resume token that is not one, was changed by hand, or was made by an
// export of another table, filter, ranges or segment size, and an
// import's ResumeAfter beyond its input.
func TestBadInputIsRefusedBeforeAnyRequest(t *testing.T) {
	src := newTable(t)
	load(t, src, 30)
	var tok string
	base := backup.ExportOptions{SegmentEntities: 10, Checkpoint: func(c backup.Checkpoint) error {
		if tok == "" {
			tok = c.Token
		}
		return nil
	}}
	if _, err := backup.Export(t.Context(), src, io.Discard, base); err != nil || tok == "" {
		t.Fatalf("export: %v", err)
	}
	other := newTable(t)
	load(t, other, 30)
	var otherTok string
	if _, err := backup.Export(t.Context(), other, io.Discard, backup.ExportOptions{SegmentEntities: 10, Checkpoint: func(c backup.Checkpoint) error {
		if otherTok == "" {
			otherTok = c.Token
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	var data bytes.Buffer
	if _, err := backup.Export(t.Context(), src, &data, backup.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	badFilter := filter.Eq("not a name", "x")

	counter := crashtest.NewKiller(-1)
	v := env.With(counter)
	tbl := viewOf(t, v, src.Name())
	bb := v.BlobService.ServiceClient().NewContainerClient(containerName(env.Container(t).URL())).NewBlockBlobClient("b.gz")

	type call func(ctx context.Context) error
	exp := func(o backup.ExportOptions) call {
		return func(ctx context.Context) error { _, err := backup.Export(ctx, tbl, io.Discard, o); return err }
	}
	blob := func(o backup.ExportOptions) call {
		return func(ctx context.Context) error { _, err := backup.ExportBlob(ctx, tbl, bb, o); return err }
	}
	imp := func(o backup.ImportOptions) call {
		return func(ctx context.Context) error {
			_, err := backup.Import(ctx, tbl, bytes.NewReader(data.Bytes()), o)
			return err
		}
	}
	tampered := []byte(tok)
	tampered[len(tampered)/2] ^= 1
	cases := map[string]call{
		"Export nil table": func(ctx context.Context) error {
			_, err := backup.Export(ctx, nil, io.Discard, backup.ExportOptions{})
			return err
		},
		"Export nil writer": func(ctx context.Context) error {
			_, err := backup.Export(ctx, tbl, nil, backup.ExportOptions{})
			return err
		},
		"Export negative parallel":   exp(backup.ExportOptions{Parallel: -1}),
		"Export negative segment":    exp(backup.ExportOptions{SegmentEntities: -3}),
		"Export empty range":         exp(backup.ExportOptions{Ranges: []backup.Range{{From: "a", To: "a"}}}),
		"Export bad filter":          exp(backup.ExportOptions{Filter: badFilter}),
		"Export overlapping ranges":  exp(backup.ExportOptions{Ranges: []backup.Range{{To: "m"}, {From: "a", To: "b"}}}),
		"Export two open ranges":     exp(backup.ExportOptions{Ranges: []backup.Range{{From: "b"}, {From: "a", To: "c"}}}),
		"Export bad token":           exp(backup.ExportOptions{SegmentEntities: 10, Resume: "!!"}),
		"Export tampered token":      exp(backup.ExportOptions{SegmentEntities: 10, Resume: string(tampered)}),
		"Export other table token":   exp(backup.ExportOptions{SegmentEntities: 10, Resume: otherTok}),
		"Export other filter token":  exp(backup.ExportOptions{SegmentEntities: 10, Resume: tok, Filter: filter.Gt("I32", filter.Int32(0))}),
		"Export other ranges token":  exp(backup.ExportOptions{SegmentEntities: 10, Resume: tok, Ranges: []backup.Range{{From: "a"}}}),
		"Export other segment token": exp(backup.ExportOptions{SegmentEntities: 11, Resume: tok}),
		"ExportBlob nil blob": func(ctx context.Context) error {
			_, err := backup.ExportBlob(ctx, tbl, nil, backup.ExportOptions{})
			return err
		},
		"ExportBlob nil table": func(ctx context.Context) error {
			_, err := backup.ExportBlob(ctx, nil, bb, backup.ExportOptions{})
			return err
		},
		"ExportBlob negative parallel": blob(backup.ExportOptions{Parallel: -1}),
		"ExportBlob bad filter":        blob(backup.ExportOptions{Filter: badFilter}),
		"ExportBlob inverted range":    blob(backup.ExportOptions{Ranges: []backup.Range{{From: "b", To: "a"}}}),
		"ExportBlob with Resume":       blob(backup.ExportOptions{Resume: tok}),
		"ExportCSV nil table":          func(ctx context.Context) error { return backup.ExportCSV(ctx, nil, io.Discard, filter.Expr{}) },
		"ExportCSV nil writer":         func(ctx context.Context) error { return backup.ExportCSV(ctx, tbl, nil, filter.Expr{}) },
		"ExportCSV bad filter":         func(ctx context.Context) error { return backup.ExportCSV(ctx, tbl, io.Discard, badFilter) },
		"Import nil table": func(ctx context.Context) error {
			_, err := backup.Import(ctx, nil, bytes.NewReader(data.Bytes()), backup.ImportOptions{})
			return err
		},
		"Import nil reader": func(ctx context.Context) error {
			_, err := backup.Import(ctx, tbl, nil, backup.ImportOptions{})
			return err
		},
		"Import bad mode":             imp(backup.ImportOptions{Mode: 2}),
		"Import negative mode":        imp(backup.ImportOptions{Mode: -1}),
		"Import negative segment":     imp(backup.ImportOptions{SegmentEntities: -1}),
		"Import negative concurrency": imp(backup.ImportOptions{Concurrency: -1}),
		"Import negative resume":      imp(backup.ImportOptions{ResumeAfter: -1}),
		"Import resume past the end":  imp(backup.ImportOptions{ResumeAfter: 31}),
		"ImportCSV nil reader": func(ctx context.Context) error {
			_, err := backup.ImportCSV(ctx, tbl, nil, backup.ImportOptions{})
			return err
		},
		"ImportCSV resume past the end": func(ctx context.Context) error {
			_, err := backup.ImportCSV(ctx, tbl, strings.NewReader("PartitionKey,RowKey\np,1\n"), backup.ImportOptions{ResumeAfter: 2})
			return err
		},
		"WriteCSV nil writer": func(context.Context) error { return backup.WriteCSV(nil, nil, nil) },
		"ReadCSV nil reader": func(context.Context) error {
			for _, err := range backup.ReadCSV(nil) {
				return err
			}
			return nil
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			before := counter.Passed()
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panic: %v", p)
					}
				}()
				err = c(t.Context())
			}()
			if !errors.Is(err, backup.ErrInvalid) || !errors.Is(err, entity.ErrInvalid) || !strings.HasPrefix(err.Error(), "backup: ") {
				t.Errorf("%v, want an error matching backup.ErrInvalid and entity.ErrInvalid", err)
			}
			if n := counter.Passed() - before; n != 0 {
				t.Errorf("%d requests sent before the error", n)
			}
		})
	}
}

// A blob that ExportBlob left half-written for one table is not resumed
// by an ExportBlob of another table, or of the same table with another
// filter or segment size, which would append other entities to it: it is
// refused with ErrInvalid and the blob keeps its bytes. The export it
// belongs to still resumes it.
func TestExportBlobRefusesABlobOfAnotherExport(t *testing.T) {
	a, b := newTable(t), newTable(t)
	load(t, a, 120)
	load(t, b, 120)
	opts := backup.ExportOptions{SegmentEntities: 50}
	bb := env.Container(t).NewBlockBlobClient("half.gz")
	stop := errors.New("stop")
	o := opts
	o.Checkpoint = func(c backup.Checkpoint) error {
		if c.Entities >= 50 {
			return stop
		}
		return nil
	}
	if _, err := backup.ExportBlob(t.Context(), a, bb, o); !errors.Is(err, stop) {
		t.Fatal(err)
	}
	half, _, _ := blobBytes(t, bb)
	for name, c := range map[string]struct {
		tbl  *entity.Table[entity.DynamicEntity]
		opts backup.ExportOptions
	}{
		"another table":   {b, opts},
		"another filter":  {a, backup.ExportOptions{SegmentEntities: 50, Filter: filter.Gt("I32", filter.Int32(0))}},
		"another segment": {a, backup.ExportOptions{SegmentEntities: 40}},
		"other ranges":    {a, backup.ExportOptions{SegmentEntities: 50, Ranges: []backup.Range{{From: "a"}}}},
	} {
		if _, err := backup.ExportBlob(t.Context(), c.tbl, bb, c.opts); !errors.Is(err, backup.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
		if now, _, _ := blobBytes(t, bb); !bytes.Equal(now, half) {
			t.Fatalf("%s: the blob changed from %d to %d bytes", name, len(half), len(now))
		}
	}
	if _, err := backup.ExportBlob(t.Context(), a, bb, opts); err != nil {
		t.Fatal(err)
	}
	if now, _, _ := blobBytes(t, bb); !bytes.Equal(now, export(t, a, opts)) {
		t.Fatal("the resumed blob is not the table's export")
	}
}

// In Insert mode an entity the service answers "already exists" for is
// read back to tell a replay from a conflict; when that read fails for a
// reason the next run may not meet (here every try of it fails before it
// is sent), the import stops with a *StoppedError before the checkpoint
// of its segment, as for a failed write, rather than count the entity as
// settled: resuming from the last checkpoint reads it again and reports
// the conflict the first run could not see.
func TestImportInsertStopsWhenItCannotReadAnExistingEntity(t *testing.T) {
	_, data := seamRows(t)
	dst := newTable(t)
	theirs := entity.DynamicEntity{PartitionKey: "b", RowKey: "r03"}
	theirs.Set("By", "other")
	if err := dst.Insert(t.Context(), &theirs); err != nil {
		t.Fatal(err)
	}
	fail := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool {
		// The point read of r03, every try.
		return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "r03")
	}})
	v := env.With(fail).WithOptions(func(o *azcore.ClientOptions) { o.Retry.MaxRetries = 1; o.Retry.RetryDelay = 1 })
	var done int64
	_, err := backup.Import(t.Context(), viewOf(t, v, dst.Name()), bytes.NewReader(data), backup.ImportOptions{Mode: backup.Insert, SegmentEntities: 2,
		Checkpoint: func(c backup.ImportCheckpoint) error { done = c.Entities; return nil }})
	var se *backup.StoppedError
	if !errors.As(err, &se) || !errors.Is(err, faults.ErrInjected) {
		t.Fatalf("import: %v, want a StoppedError from the failed read", err)
	}
	at := inputOrder(t, data)["r03"]
	if done > at {
		t.Fatalf("checkpoint at %d entities, past r03 (entity %d) whose read failed", done, at)
	}
	sum, err := backup.Import(t.Context(), dst, bytes.NewReader(data), backup.ImportOptions{Mode: backup.Insert, SegmentEntities: 2, ResumeAfter: done})
	var ie *backup.ImportError
	if !errors.As(err, &ie) || len(sum.Conflicts) != 1 || sum.Conflicts[0].RowKey != "r03" {
		t.Fatalf("resumed import: %+v %v, want r03 in conflict", sum, err)
	}
	if by, _, _ := storedBy(t, env.TableService.NewClient(dst.Name()), "b", "r03"); by != "other" {
		t.Fatalf("r03 holds By=%q, want the other writer's entity kept", by)
	}
}

// A backup is not a snapshot: a change made while Export runs — here
// between its first and second page — is in the backup when its entity's
// page is read after it (a replace, an insert, a delete ahead of the
// reader), not when the page was read before it; every key is written at
// most once either way.
func TestExportReadsEachEntityWhenItsPageIsRead(t *testing.T) {
	src := newTable(t)
	ents := make([]entity.DynamicEntity, 2500)
	for i := range ents {
		ents[i] = entity.DynamicEntity{PartitionKey: "p", RowKey: fmt.Sprintf("%05d", i)}
		ents[i].Set("V", "old")
	}
	if _, err := src.BulkWrite(t.Context(), ents, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	raw := env.TableService.NewClient(src.Name())
	h := &countHook{at: 2, fn: func() {
		ctx := context.Background()
		for _, rk := range []string{"00000", "02400"} {
			body := fmt.Sprintf(`{"PartitionKey":"p","RowKey":%q,"V":"new"}`, rk)
			if _, err := raw.UpsertEntity(ctx, []byte(body), nil); err != nil {
				t.Error(err)
			}
		}
		if _, err := raw.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"09999","V":"new"}`), nil); err != nil {
			t.Error(err)
		}
		if _, err := raw.DeleteEntity(ctx, "p", "01500", nil); err != nil {
			t.Error(err)
		}
	}}
	var out bytes.Buffer
	if _, err := backup.Export(t.Context(), viewOf(t, env.With(h), src.Name()), &out, backup.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range lines(t, out.Bytes())[1:] {
		var d struct{ RowKey, V string }
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		if _, dup := got[d.RowKey]; dup {
			t.Fatalf("%s written twice", d.RowKey)
		}
		got[d.RowKey] = d.V
	}
	for rk, want := range map[string]string{"00000": "old", "02400": "new", "09999": "new", "01500": "", "00001": "old"} {
		if got[rk] != want {
			t.Errorf("%s: backup holds V=%q, want %q", rk, got[rk], want)
		}
	}
	if len(got) != 2500 {
		t.Errorf("backup holds %d entities, want 2,500", len(got))
	}
}

// inFlight is a policy that records the most requests in flight at once.
type inFlight struct {
	mu       sync.Mutex
	now, top int
}

func (f *inFlight) Do(req *policy.Request) (*http.Response, error) {
	f.mu.Lock()
	f.now++
	f.top = max(f.top, f.now)
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.now--; f.mu.Unlock() }()
	return req.Next()
}

// Export reads at most Parallel ranges at once — never more requests in
// flight — and still writes every range in the order given.
func TestExportReadsAtMostParallelRangesAtOnce(t *testing.T) {
	src := newTable(t)
	load(t, src, sized(1200))
	ranges := []backup.Range{{To: "'"}, {From: "'", To: "O"}, {From: "O", To: "a"}, {From: "a", To: "z"}, {From: "z", To: "日"}, {From: "日"}}
	whole := export(t, src, backup.ExportOptions{})
	for _, p := range []int{1, 2, 3} {
		f := &inFlight{}
		got := export(t, viewOf(t, env.With(f), src.Name()), backup.ExportOptions{Ranges: ranges, Parallel: p})
		if f.top > p {
			t.Errorf("Parallel %d: %d requests in flight at once", p, f.top)
		}
		if a, b := lines(t, whole), lines(t, got); strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("Parallel %d: the ranged export has other lines", p)
		}
	}
}

// Progress is reported after each segment: entities and bytes only grow,
// the last report is the summary's (the whole input's bytes for an
// import), a resumed run goes on from its checkpoint's counts, and the
// rate is a number.
func TestProgressCountsWhatWasDone(t *testing.T) {
	n, seg := int64(sized(1000)), sized(150)
	src := newTable(t)
	load(t, src, int(n))
	check := func(t *testing.T, ps []backup.Progress, entities, bytes int64) {
		t.Helper()
		if len(ps) == 0 {
			t.Fatal("no progress reported")
		}
		for i, p := range ps {
			if i > 0 && (p.Entities < ps[i-1].Entities || p.Bytes < ps[i-1].Bytes) {
				t.Errorf("progress went back: %+v after %+v", p, ps[i-1])
			}
			if p.Rate < 0 || p.Rate != p.Rate || p.Elapsed < 0 {
				t.Errorf("progress %+v", p)
			}
		}
		if last := ps[len(ps)-1]; last.Entities != entities || last.Bytes != bytes {
			t.Errorf("last progress %+v, want %d entities and %d bytes", last, entities, bytes)
		}
	}
	var ps []backup.Progress
	var cps []backup.Checkpoint
	var out bytes.Buffer
	sum, err := backup.Export(t.Context(), src, &out, backup.ExportOptions{SegmentEntities: seg,
		Progress:   func(p backup.Progress) { ps = append(ps, p) },
		Checkpoint: func(c backup.Checkpoint) error { cps = append(cps, c); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	check(t, ps, n, sum.Bytes)
	if int64(out.Len()) != sum.Bytes || len(ps) != 7 {
		t.Errorf("summary %+v for %d bytes, %d reports, want one per segment (7)", sum, out.Len(), len(ps))
	}

	// Resumed after the third checkpoint.
	ps = nil
	resumed := bytes.NewBuffer(bytes.Clone(out.Bytes()[:cps[2].Bytes]))
	if _, err := backup.Export(t.Context(), src, resumed, backup.ExportOptions{SegmentEntities: seg, Resume: cps[2].Token,
		Progress: func(p backup.Progress) { ps = append(ps, p) }}); err != nil {
		t.Fatal(err)
	}
	check(t, ps, n, sum.Bytes)
	if ps[0].Entities <= cps[2].Entities {
		t.Errorf("the resumed run's first report %+v does not go on from %d entities", ps[0], cps[2].Entities)
	}

	for _, resume := range []int64{0, n * 9 / 20} {
		ps = nil
		isum, err := backup.Import(t.Context(), newTable(t), bytes.NewReader(out.Bytes()), backup.ImportOptions{SegmentEntities: sized(200), ResumeAfter: resume,
			Progress: func(p backup.Progress) { ps = append(ps, p) }})
		if err != nil || isum.Entities != n {
			t.Fatalf("import: %+v %v", isum, err)
		}
		check(t, ps, n, int64(out.Len()))
	}
}

// A backup read a byte at a time, or with the data and io.EOF together,
// imports as it does in one piece; a reader that fails midway stops the
// import with a *LineError after the members read whole, and nothing of
// the member it was in.
func TestImportReadsAnyReader(t *testing.T) {
	n, seg := sized(250), sized(100)
	src := newTable(t)
	load(t, src, n)
	data := export(t, src, backup.ExportOptions{SegmentEntities: seg})
	want := rawRows(t, src)
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(bytes.NewReader(data)),
		"data+EOF": iotest.DataErrReader(bytes.NewReader(data)),
		"half":     iotest.HalfReader(bytes.NewReader(data)),
	} {
		dst := newTable(t)
		if sum, err := backup.Import(t.Context(), dst, r, backup.ImportOptions{SegmentEntities: sized(30)}); err != nil || sum.Entities != int64(n) {
			t.Fatalf("%s: %+v %v", name, sum, err)
		}
		if got := rawRows(t, dst); !maps.Equal(got, want) {
			t.Fatalf("%s: the table holds %d entities, want the %d of the source", name, len(got), len(want))
		}
	}
	// The first member (header and seg entities) is whole; the reader
	// fails inside the second.
	members := splitMembers(t, data)
	cut := len(members[0]) + len(members[1])/2
	dst := newTable(t)
	boom := errors.New("disk read error")
	sum, err := backup.Import(t.Context(), dst, io.MultiReader(bytes.NewReader(data[:cut]), iotest.ErrReader(boom)), backup.ImportOptions{SegmentEntities: sized(30)})
	var le *backup.LineError
	if !errors.As(err, &le) || !errors.Is(err, boom) {
		t.Fatalf("import over a failing reader: %v, want a LineError wrapping the read error", err)
	}
	if n := len(rawRows(t, dst)); n != seg || sum.Entities != int64(seg) {
		t.Fatalf("%d entities stored, %d counted; want the first member's %d", n, sum.Entities, seg)
	}
}

// splitMembers cuts a backup into its gzip members.
func splitMembers(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var out [][]byte
	br := bytes.NewReader(data)
	for br.Len() > 0 {
		start := len(data) - br.Len()
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		if _, err := io.Copy(io.Discard, zr); err != nil {
			t.Fatal(err)
		}
		out = append(out, data[start:len(data)-br.Len()])
	}
	return out
}

// failAfter accepts n bytes, then fails every write (a full disk).
type failAfter struct {
	buf bytes.Buffer
	n   int
}

var errDiskFull = errors.New("disk full")

func (w *failAfter) Write(p []byte) (int, error) {
	if left := w.n - w.buf.Len(); len(p) > left {
		w.buf.Write(p[:max(left, 0)])
		return max(left, 0), errDiskFull
	}
	return w.buf.Write(p)
}

// An output that fails partway (a full disk) stops Export with an error
// that says so and wraps the writer's; no checkpoint counts bytes the
// writer did not take, so the output cut to the last checkpoint and
// resumed ends with the bytes of an export that did not fail.
func TestExportStopsWhenItsWriterFails(t *testing.T) {
	src := newTable(t)
	load(t, src, sized(600))
	opts := backup.ExportOptions{SegmentEntities: sized(100)}
	whole := export(t, src, opts)
	for _, n := range []int{0, 10, len(whole) / 3, len(whole) - 1} {
		w := &failAfter{n: n}
		var last backup.Checkpoint
		o := opts
		o.Checkpoint = func(c backup.Checkpoint) error { last = c; return nil }
		_, err := backup.Export(t.Context(), src, w, o)
		if !errors.Is(err, errDiskFull) || !strings.HasPrefix(err.Error(), "backup: ") {
			t.Fatalf("writer failing after %d bytes: %v, want a backup error wrapping it", n, err)
		}
		if last.Bytes > int64(w.buf.Len()) {
			t.Fatalf("writer failing after %d bytes: a checkpoint counts %d bytes", n, last.Bytes)
		}
		out := bytes.NewBuffer(w.buf.Bytes()[:last.Bytes])
		o = opts
		o.Resume = last.Token
		if _, err := backup.Export(t.Context(), src, out, o); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), whole) {
			t.Fatalf("writer failing after %d bytes: the resumed output differs", n)
		}
	}
}

// A cancelled context stops Export and Import with an error that names
// the package and matches context.Canceled; the last checkpoint still
// resumes to the whole export.
func TestCancelledRunsSayWhereTheyStopped(t *testing.T) {
	src := newTable(t)
	load(t, src, sized(600))
	opts := backup.ExportOptions{SegmentEntities: sized(100)}
	whole := export(t, src, opts)
	ctx, cancel := context.WithCancel(t.Context())
	var out bytes.Buffer
	var last backup.Checkpoint
	o := opts
	o.Checkpoint = func(c backup.Checkpoint) error {
		last = c
		if c.Entities >= int64(sized(200)) {
			cancel()
		}
		return nil
	}
	_, err := backup.Export(ctx, src, &out, o)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "backup: ") {
		t.Fatalf("cancelled export: %v, want a backup error matching context.Canceled", err)
	}
	out.Truncate(int(last.Bytes))
	o = opts
	o.Resume = last.Token
	if _, err := backup.Export(t.Context(), src, &out, o); err != nil || !bytes.Equal(out.Bytes(), whole) {
		t.Fatalf("resumed after a cancel: %v", err)
	}

	ctx, cancel = context.WithCancel(t.Context())
	_, err = backup.Import(ctx, newTable(t), bytes.NewReader(whole), backup.ImportOptions{SegmentEntities: sized(100),
		Checkpoint: func(c backup.ImportCheckpoint) error {
			if c.Entities >= int64(sized(200)) {
				cancel()
			}
			return nil
		}})
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "backup: ") {
		t.Fatalf("cancelled import: %v, want a backup error matching context.Canceled", err)
	}
}

// An import resumed from its very last checkpoint — it had finished —
// sends nothing and succeeds; one step further is another input's count.
func TestImportResumedAtItsEnd(t *testing.T) {
	_, data := seamRows(t)
	dst := newTable(t)
	var last int64
	if _, err := backup.Import(t.Context(), dst, bytes.NewReader(data), backup.ImportOptions{SegmentEntities: 3,
		Checkpoint: func(c backup.ImportCheckpoint) error { last = c.Entities; return nil }}); err != nil || last != 8 {
		t.Fatalf("import: %v, last checkpoint %d", err, last)
	}
	counter := crashtest.NewKiller(-1)
	v := viewOf(t, env.With(counter), dst.Name())
	sum, err := backup.Import(t.Context(), v, bytes.NewReader(data), backup.ImportOptions{ResumeAfter: last})
	if err != nil || sum.Entities != 8 || sum.Written != 0 || counter.Passed() != 0 {
		t.Fatalf("resumed at the end: %+v %v, %d requests", sum, err, counter.Passed())
	}
	if _, err := backup.Import(t.Context(), v, bytes.NewReader(data), backup.ImportOptions{ResumeAfter: last + 1}); !errors.Is(err, backup.ErrInvalid) || counter.Passed() != 0 {
		t.Fatalf("resumed past the end: %v, %d requests", err, counter.Passed())
	}
}
