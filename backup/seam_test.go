package backup_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/crashtest"
	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/integration/seamtest"
)

// viewOf is tbl's table through e's clients (a view that crashes or loses
// replies).
func viewOf(t *testing.T, e *integration.Env, name string) *entity.Table[entity.DynamicEntity] {
	t.Helper()
	v, err := entity.NewTableFromService[entity.DynamicEntity](e.TableService, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// awkwardTable holds entities whose keys sit on and around the boundaries
// of awkwardRanges: the empty PartitionKey and RowKey, quotes, unicode.
func awkwardTable(t *testing.T) *entity.Table[entity.DynamicEntity] {
	t.Helper()
	tbl := newTable(t)
	var ents []entity.DynamicEntity
	for _, pk := range []string{"", "'", "''", "O'Brien", "a", "Ü", "Ü'p k", "日本"} {
		for _, rk := range []string{"", "'", "a\"b", "Ü", "z"} {
			d := entity.DynamicEntity{PartitionKey: pk, RowKey: rk}
			d.Set("S", pk+"|"+rk)
			ents = append(ents, d)
		}
	}
	if _, err := tbl.BulkWrite(t.Context(), ents, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	return tbl
}

// awkwardRanges start and end on awkward keys; together they cover the
// table.
var awkwardRanges = []backup.Range{{To: "'"}, {From: "'", To: "O'Brien"}, {From: "O'Brien", To: "Ü"}, {From: "Ü"}}

// An export stopped after each of its checkpoints in turn — one entity per
// segment, so every position, on every awkward key and range boundary, is
// a resume point — and resumed with its output cut to the checkpoint's
// byte count, ends with the very bytes of an export that did not stop.
func TestExportResumesAtEveryCheckpointWithAwkwardKeys(t *testing.T) {
	src := awkwardTable(t)
	opts := backup.ExportOptions{SegmentEntities: 1, Ranges: awkwardRanges, Parallel: 2}
	whole := export(t, src, opts)
	if n := len(lines(t, whole)); n != 41 {
		t.Fatalf("the export has %d lines, want header + 40", n)
	}
	for k := 0; k <= 41; k++ { // 40 segments of one entity
		var out bytes.Buffer
		var last backup.Checkpoint
		seen := 0
		o := opts
		o.Checkpoint = func(c backup.Checkpoint) error {
			if seen++; seen > k {
				return errCrash
			}
			last = c
			return nil
		}
		if _, err := backup.Export(t.Context(), src, &out, o); !errors.Is(err, errCrash) {
			if err != nil || seen > k {
				t.Fatalf("stopped after %d checkpoints: %v", k, err)
			}
			if k < 40 {
				t.Fatalf("the export made only %d checkpoints", seen)
			}
			continue // the export ended first
		}
		out.Truncate(int(last.Bytes))
		o = opts
		o.Resume = last.Token
		if k == 0 {
			o.Resume = "" // nothing recorded: start over
		}
		if _, err := backup.Export(t.Context(), src, &out, o); err != nil {
			t.Fatalf("resumed after %d checkpoints: %v", k, err)
		}
		if !bytes.Equal(out.Bytes(), whole) {
			t.Fatalf("resumed after %d checkpoints: %d bytes, the whole export %d; lines %q", k, out.Len(), len(whole), lines(t, out.Bytes()))
		}
	}
}

// Export killed at every read of the table, before it is sent and after the
// service answered it, and resumed by a fresh run from the last checkpoint
// its output recorded, gives the bytes of an uncrashed export.
func TestExportSurvivesACrashAtEveryRequest(t *testing.T) {
	src := awkwardTable(t)
	opts := backup.ExportOptions{SegmentEntities: 7, Ranges: awkwardRanges, Parallel: 2}
	whole := export(t, src, opts)
	crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
		var out bytes.Buffer
		var last backup.Checkpoint
		return crashtest.Run{
			Work: func(ctx context.Context, v *integration.Env) error {
				o := opts
				o.Checkpoint = func(c backup.Checkpoint) error { last = c; return nil }
				_, err := backup.Export(ctx, viewOf(t, v, src.Name()), &out, o)
				return err
			},
			Recover: func(ctx context.Context) error {
				if last.Token == "" && out.Len() > 0 && bytes.Equal(out.Bytes(), whole) {
					return nil
				}
				out.Truncate(int(last.Bytes))
				o := opts
				o.Resume = last.Token
				_, err := backup.Export(ctx, src, &out, o)
				return err
			},
			Check: func(t *testing.T) {
				if !bytes.Equal(out.Bytes(), whole) {
					t.Fatalf("the resumed export has %d bytes, the uncrashed one %d", out.Len(), len(whole))
				}
			},
		}
	}})
}

// seamRows is a small table for the import seams: two partitions, keys
// r00…r07 (even ones in partition a), each with its own N.
func seamRows(t *testing.T) (src *entity.Table[entity.DynamicEntity], data []byte) {
	t.Helper()
	src = newTable(t)
	var ents []entity.DynamicEntity
	for i := range 8 {
		d := entity.DynamicEntity{PartitionKey: partOf(i), RowKey: fmt.Sprintf("r%02d", i)}
		d.Set("N", int64(i)).Set("By", "backup")
		ents = append(ents, d)
	}
	if _, err := src.BulkWrite(t.Context(), ents, entity.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	return src, export(t, src, backup.ExportOptions{})
}

func partOf(i int) string { return string(rune('a' + i%2)) }

// Import killed at every request, before it is sent and after the service
// executed it, and resumed by a fresh run from the last checkpoint the
// crashed one recorded, leaves the table holding exactly the backup, in
// both modes; in Insert mode the segment written again counts as existing,
// never as a conflict.
func TestImportSurvivesACrashAtEveryRequest(t *testing.T) {
	src, data := seamRows(t)
	want := export(t, src, backup.ExportOptions{})
	wantRaw := rawRows(t, src)
	for _, tc := range importCases(t, src, data) {
		mode, importer, data := tc.mode, tc.importer, tc.data
		t.Run(tc.name, func(t *testing.T) {
			crashtest.EveryStep(t, env, crashtest.Scenario{Prepare: func(t *testing.T) crashtest.Run {
				dst := newTable(t)
				var done int64
				return crashtest.Run{
					Work: func(ctx context.Context, v *integration.Env) error {
						_, err := importer(ctx, viewOf(t, v, dst.Name()), bytes.NewReader(data), backup.ImportOptions{Mode: mode, SegmentEntities: 3,
							Checkpoint: func(c backup.ImportCheckpoint) error { done = c.Entities; return nil }})
						return err
					},
					Recover: func(ctx context.Context) error {
						sum, err := importer(ctx, dst, bytes.NewReader(data), backup.ImportOptions{Mode: mode, SegmentEntities: 3, ResumeAfter: done})
						if err == nil && (len(sum.Conflicts) > 0 || sum.Entities != 8) {
							err = fmt.Errorf("resumed import %+v", sum)
						}
						return err
					},
					Check: func(t *testing.T) {
						if got := export(t, dst, backup.ExportOptions{}); !bytes.Equal(got, want) {
							t.Fatalf("the table after a crash and a resumed import exports %q", lines(t, got))
						}
						if got := rawRows(t, dst); !maps.Equal(got, wantRaw) {
							t.Fatalf("the table after a crash and a resumed import holds, read raw, %q", got)
						}
					},
				}
			}})
		})
	}
}

// importCase is one way of importing seamRows: a backup or its Storage
// Explorer CSV, in a mode.
type importCase struct {
	name     string
	mode     backup.Mode
	importer func(context.Context, *entity.Table[entity.DynamicEntity], io.Reader, backup.ImportOptions) (backup.ImportSummary, error)
	data     []byte
}

func importCases(t *testing.T, src *entity.Table[entity.DynamicEntity], data []byte) []importCase {
	t.Helper()
	var csvData bytes.Buffer
	if err := backup.ExportCSV(t.Context(), src, &csvData, filter.Expr{}); err != nil {
		t.Fatal(err)
	}
	var out []importCase
	for _, mode := range []backup.Mode{backup.Upsert, backup.Insert} {
		out = append(out,
			importCase{fmt.Sprintf("backup mode %d", mode), mode, backup.Import, data},
			importCase{fmt.Sprintf("CSV mode %d", mode), mode, backup.ImportCSV, csvData.Bytes()})
	}
	return out
}

var rowKeyIn = regexp.MustCompile(`r0[0-7]`)

// keysIn are the RowKeys of seamRows that a request names (in its URL or
// its body).
func keysIn(req *http.Request) []string {
	text := req.URL.String()
	if req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			body, _ := io.ReadAll(b)
			text += string(body)
		}
	}
	var out []string
	for _, k := range rowKeyIn.FindAllString(text, -1) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// compete is the second writer on (pk, rk) through a raw client: its
// entity has By "other".
func compete(ctx context.Context, raw *aztables.Client, kind, pk, rk string) error {
	body := []byte(fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"N@odata.type":"Edm.Int64","N":"99","By":"other"}`, pk, rk))
	var err error
	switch kind {
	case seamtest.Insert:
		_, err = raw.AddEntity(ctx, body, nil)
	case seamtest.Replace:
		_, err = raw.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
	case seamtest.Merge:
		_, err = raw.UpdateEntity(ctx, []byte(fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"By":"other"}`, pk, rk)), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
	case seamtest.Delete:
		_, err = raw.DeleteEntity(ctx, pk, rk, nil)
	}
	return err
}

// storedBy reads (pk, rk) with the raw client: its By, or found false.
func storedBy(t *testing.T, raw *aztables.Client, pk, rk string) (by string, n int64, found bool) {
	t.Helper()
	resp, err := raw.GetEntity(t.Context(), pk, rk, nil)
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
		return "", 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var d entity.DynamicEntity
	if err := entity.Unmarshal(resp.Value, &d); err != nil {
		t.Fatal(err)
	}
	by, _ = entity.Prop[string](&d, "By")
	n, _ = entity.Prop[int64](&d, "N")
	return by, n, true
}

// inputOrder is the place of each of seamRows' RowKeys in an import's
// input (a backup or its CSV): the entities before it, which is what
// ImportSummary.Entities counts. The input follows the export's order,
// which is the service's: not r00…r07, and on Cosmos DB not even sorted.
func inputOrder(t *testing.T, data []byte) map[string]int64 {
	t.Helper()
	text := data
	if zr, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
		if text, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	at := map[string]int64{}
	for _, k := range rowKeyIn.FindAll(text, -1) {
		if _, ok := at[string(k)]; !ok {
			at[string(k)] = int64(len(at))
		}
	}
	if len(at) != 8 {
		t.Fatalf("the input names %d of the 8 RowKeys: %q", len(at), text)
	}
	return at
}

// Import with the reply of each request lost in turn and another writer's
// insert, replace, merge or delete of the same keys run before azcore's
// resend: what the summary says of each entity is what the table holds —
// written or existing means the backup's entity is stored, a conflict that
// another is, a failure that the outcome is unknown or the entity is not
// the backup's.
func TestImportBesideAnotherWriter(t *testing.T) {
	src, data := seamRows(t)
	for _, tc := range importCases(t, src, data) {
		mode, importer, data := tc.mode, tc.importer, tc.data
		at := inputOrder(t, data)
		t.Run(tc.name, func(t *testing.T) {
			seamtest.EveryReply(t, env, seamtest.Race{Parallel: 8, Prepare: func(t *testing.T) seamtest.RaceRun {
				dst := newTable(t)
				raw := env.TableService.NewClient(dst.Name())
				var sum backup.ImportSummary
				return seamtest.RaceRun{
					Work: func(ctx context.Context, v *integration.Env) error {
						var err error
						sum, err = importer(ctx, viewOf(t, v, dst.Name()), bytes.NewReader(data), backup.ImportOptions{Mode: mode, SegmentEntities: 3})
						return err
					},
					Compete: func(ctx context.Context, kind string, req *http.Request) error {
						var errs []error
						for _, rk := range keysIn(req) {
							var i int
							fmt.Sscanf(rk, "r%02d", &i)
							errs = append(errs, compete(ctx, raw, kind, partOf(i), rk))
						}
						return errors.Join(errs...)
					},
					Check: func(t *testing.T, kind string, err error) {
						var ie *backup.ImportError
						var se *backup.StoppedError
						if err != nil && !errors.As(err, &ie) && !errors.As(err, &se) {
							t.Fatalf("import: %v", err)
						}
						if kind == "" && err != nil {
							t.Fatalf("import without a fault: %v", err)
						}
						failed := map[string]error{}
						for _, f := range sum.Failed {
							failed[f.RowKey] = f.Err
						}
						conflict := map[string]bool{}
						for _, c := range sum.Conflicts {
							conflict[c.RowKey] = true
						}
						for i := range 8 {
							rk := fmt.Sprintf("r%02d", i)
							by, n, found := storedBy(t, raw, partOf(i), rk)
							ours := found && by == "backup" && n == int64(i)
							switch {
							case se != nil && at[rk] >= sum.Entities && failed[rk] == nil && !conflict[rk] && !ours:
								// Stopped: a later segment was not reached, and
								// resuming writes it.
							case failed[rk] != nil:
								if ours && !errors.Is(failed[rk], entity.ErrOutcomeUnknown) {
									t.Errorf("%s: reported failed (%v) but the backup's entity is stored", rk, failed[rk])
								}
							case conflict[rk]:
								if ours {
									t.Errorf("%s: reported in conflict but the backup's entity is stored", rk)
								}
							case !ours:
								t.Errorf("%s: reported written but the table holds by=%q n=%d found=%v", rk, by, n, found)
							}
						}
					},
				}
			}})
		})
	}
}

// One bad entity among many — too large once encoded, an invalid key, an
// invalid property name, a line that does not decode — fails alone, named
// with its line and keys; every other entity is written, in both modes.
func TestImportOneBadEntityAmongMany(t *testing.T) {
	// 20 properties of 30,000 characters: each under the 64 KiB of a
	// property, together over the 1 MiB of an entity.
	var large strings.Builder
	large.WriteString(`{"PartitionKey":"p","RowKey":"003"`)
	for i := range 20 {
		fmt.Fprintf(&large, `,"P%02d":"%s"`, i, strings.Repeat("x", 30_000))
	}
	large.WriteString("}")
	bad := map[int]string{
		3: large.String(),
		5: `{"PartitionKey":"p","RowKey":"0/5"}`,
		7: `{"PartitionKey":"p","RowKey":"007","1bad name":"x"}`,
		9: `{"PartitionKey":"p","RowKey":"009","N@odata.type":"Edm.Int32","N":"nine"}`,
	}
	var body strings.Builder
	body.WriteString(`{"tablekit.backup":1}` + "\n")
	for i := range 12 {
		if l, ok := bad[i]; ok {
			body.WriteString(l + "\n")
			continue
		}
		fmt.Fprintf(&body, `{"PartitionKey":"p","RowKey":"%03d","N":%d}`+"\n", i, i)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	io.WriteString(w, body.String())
	w.Close()
	for _, mode := range []backup.Mode{backup.Upsert, backup.Insert} {
		t.Run(fmt.Sprint("mode ", mode), func(t *testing.T) {
			dst := newTable(t)
			sum, err := backup.Import(t.Context(), dst, bytes.NewReader(gz.Bytes()), backup.ImportOptions{Mode: mode})
			var ie *backup.ImportError
			if !errors.As(err, &ie) || ie.Failed != 4 {
				t.Fatalf("import: %+v %v, want 4 failed", sum, err)
			}
			var rks []string
			for _, f := range sum.Failed {
				rks = append(rks, f.RowKey)
				if f.Line < 2 || f.PartitionKey != "p" {
					t.Errorf("failure %+v does not name its line and keys", f)
				}
			}
			if !slices.Equal(rks, []string{"003", "0/5", "007", "009"}) {
				t.Errorf("failed %q", rks)
			}
			if sum.Written != 8 || sum.Entities != 12 || count(t, dst) != 8 {
				t.Errorf("written %d of %d, %d in the table; want the 8 good ones", sum.Written, sum.Entities, count(t, dst))
			}
		})
	}
}

// The lines of a gzip member are written only once the member's checksum
// has been verified: a member whose bytes were changed (so that its lines
// still decode, to other values) or that was cut short writes nothing,
// while the intact members before it are written and the import stops
// with the line where the damage was found.
func TestImportWritesNothingOfADamagedMember(t *testing.T) {
	member := func(s string) []byte {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, gzip.NoCompression) // stored: a changed byte still inflates
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	first := member(`{"tablekit.backup":1}` + "\n" + `{"PartitionKey":"p","RowKey":"1","N":1}` + "\n")
	second := member(`{"PartitionKey":"p","RowKey":"2","N":2}` + "\n" + `{"PartitionKey":"p","RowKey":"3","N":3}` + "\n")
	tampered := bytes.Replace(second, []byte(`"N":2`), []byte(`"N":7`), 1)
	if bytes.Equal(tampered, second) {
		t.Fatal("the member was not changed")
	}
	for name, in := range map[string][]byte{
		"tampered":  append(slices.Clone(first), tampered...),
		"truncated": append(slices.Clone(first), second[:len(second)-6]...),
	} {
		t.Run(name, func(t *testing.T) {
			dst := newTable(t)
			_, err := backup.Import(t.Context(), dst, bytes.NewReader(in), backup.ImportOptions{SegmentEntities: 1})
			if !errors.Is(err, backup.ErrFormat) {
				t.Fatalf("import: %v, want ErrFormat", err)
			}
			if n := count(t, dst); n != 1 {
				t.Fatalf("%d entities written, want only the intact member's one", n)
			}
			if _, err := dst.Get(t.Context(), "p", "1"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// In Insert mode an entity stored with the backup's very values counts as
// existing, whatever they are: a NaN, which is not equal to itself in Go,
// is equal to itself in the backup.
func TestImportInsertTakesStoredNaNAsExisting(t *testing.T) {
	src := newTable(t)
	d := entity.DynamicEntity{PartitionKey: "p", RowKey: "nan"}
	d.Set("D", nan()).Set("T", "x")
	if err := src.Insert(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	data := export(t, src, backup.ExportOptions{})
	sum, err := backup.Import(t.Context(), src, bytes.NewReader(data), backup.ImportOptions{Mode: backup.Insert})
	if err != nil || sum.Existing != 1 || len(sum.Conflicts) != 0 {
		t.Fatalf("import into the table it came from: %+v %v, want 1 existing", sum, err)
	}
}

func nan() float64 { var z float64; return z / z }

// An entity whose write fails for a reason the next run may not meet (here
// every try of one transaction fails before it is sent) stops the import
// before the checkpoint of its segment: resuming from the last checkpoint
// writes it. A checkpoint never counts an entity that was not settled.
func TestImportStopsBeforeTheCheckpointOfAFailedSegment(t *testing.T) {
	src, data := seamRows(t)
	dst := newTable(t)
	var n int
	var mu sync.Mutex
	fail := faults.New(faults.Config{FailBefore: 1, Match: func(r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		// Every try of the second write request fails.
		if strings.HasSuffix(r.URL.Path, "$batch") || r.Method != http.MethodGet {
			n++
			return n >= 2 && n <= 2+seamtest.Retries
		}
		return false
	}})
	v := env.With(fail).WithOptions(func(o *azcore.ClientOptions) { o.Retry.MaxRetries = seamtest.Retries; o.Retry.RetryDelay = 1 })
	var done int64
	_, err := backup.Import(t.Context(), viewOf(t, v, dst.Name()), bytes.NewReader(data), backup.ImportOptions{SegmentEntities: 2,
		Checkpoint: func(c backup.ImportCheckpoint) error { done = c.Entities; return nil }})
	var se *backup.StoppedError
	if !errors.As(err, &se) || !errors.Is(err, faults.ErrInjected) {
		t.Fatalf("import: %v, want a StoppedError", err)
	}
	if done >= int64(se.Line-1) {
		t.Fatalf("checkpoint at %d entities, past the failed segment from line %d", done, se.Line)
	}
	if _, err := backup.Import(t.Context(), dst, bytes.NewReader(data), backup.ImportOptions{SegmentEntities: 2, ResumeAfter: done}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(export(t, dst, backup.ExportOptions{}), export(t, src, backup.ExportOptions{})) {
		t.Fatal("the resumed import left other entities than the backup's")
	}
}

// blobBytes downloads a blob with the raw client: its bytes and metadata
// token, found false when there is no blob.
func blobBytes(t *testing.T, c *blockblob.Client) (data []byte, token string, found bool) {
	t.Helper()
	resp, err := c.DownloadStream(t.Context(), nil)
	if bloberror.HasCode(err, bloberror.BlobNotFound) {
		return nil, "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range resp.Metadata {
		if strings.EqualFold(k, backup.MetadataToken) && v != nil {
			token = *v
		}
	}
	return data, token, true
}

// ExportBlob with the reply of each blob request lost in turn, and another
// writer creating, overwriting, re-labelling (metadata) or deleting the
// blob before azcore's resend: the export either succeeds with the blob
// holding exactly the export, or stops with an error saying the blob was
// changed (or is not its own) — never a success over another writer's
// blob, never a blob that mixes both. Each run records whether the other
// writer's change was applied: when it was not (a delete of a blob not
// there yet, an insert over one that is), the lost reply alone must not
// stop the export; and every kind of writer did apply its change in some
// run, so the test met the writers it claims.
func TestExportBlobBesideAnotherWriter(t *testing.T) {
	src := newTable(t)
	load(t, src, sized(250))
	opts := backup.ExportOptions{SegmentEntities: sized(100)}
	whole := export(t, src, opts)
	cont := env.Container(t)
	var mu sync.Mutex
	n := 0
	applied := map[string]int{} // kind → runs whose competitor changed the blob
	seamtest.EveryReply(t, env, seamtest.Race{Parallel: 8, Prepare: func(t *testing.T) seamtest.RaceRun {
		mu.Lock()
		n++
		name := fmt.Sprintf("race-%d.gz", n)
		mu.Unlock()
		raw := cont.NewBlockBlobClient(name)
		competed := false // the competitor ran and its change was applied
		return seamtest.RaceRun{
			Work: func(ctx context.Context, v *integration.Env) error {
				dst := v.BlobService.ServiceClient().NewContainerClient(containerName(cont.URL())).NewBlockBlobClient(name)
				_, err := backup.ExportBlob(ctx, src, dst, opts)
				return err
			},
			Compete: func(ctx context.Context, kind string, _ *http.Request) error {
				foreign := strings.NewReader("someone else's data")
				var err error
				switch kind {
				case seamtest.Insert:
					_, err = raw.UploadStream(ctx, foreign, &blockblob.UploadStreamOptions{AccessConditions: &blob.AccessConditions{
						ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: ptr(azcore.ETagAny)}}})
				case seamtest.Replace:
					_, err = raw.UploadStream(ctx, foreign, nil)
				case seamtest.Merge:
					_, err = raw.SetMetadata(ctx, map[string]*string{"owner": ptr("someone else")}, nil)
				case seamtest.Delete:
					_, err = raw.Delete(ctx, nil)
				}
				competed = err == nil
				return err
			},
			Check: func(t *testing.T, kind string, err error) {
				data, token, found := blobBytes(t, raw)
				complete := found && token != "" && bytes.Equal(data, whole)
				if competed {
					mu.Lock()
					applied[kind]++
					mu.Unlock()
				}
				switch {
				case kind != "" && !competed && (err != nil || !complete):
					t.Fatalf("the other writer changed nothing, yet ExportBlob: %v, blob complete %v", err, complete)
				case kind == "" && (err != nil || !complete):
					t.Fatalf("without a fault: %v, blob complete %v", err, complete)
				case err == nil && !complete:
					t.Fatalf("ExportBlob succeeded, but the blob holds %d bytes (found %v, token %v), the export %d", len(data), found, token != "", len(whole))
				case err != nil && !errors.Is(err, backup.ErrBlobChanged) && !errors.Is(err, backup.ErrInvalid):
					t.Fatalf("ExportBlob: %v, want ErrBlobChanged or ErrInvalid", err)
				}
			},
		}
	}})
	for _, kind := range seamtest.Competitors {
		if applied[kind] == 0 {
			t.Errorf("the %s writer never changed the blob: the race was not run", kind)
		}
	}
	t.Logf("runs whose other writer changed the blob, by kind: %v", applied)
}

// Two ExportBlobs to one blob at once (a resumed run started while the
// first still runs): the commits are conditional, so one of them stops
// with ErrBlobChanged or both agree, and the blob ends holding exactly one
// export.
func TestExportBlobTwoAtOnce(t *testing.T) {
	src := newTable(t)
	load(t, src, sized(600))
	opts := backup.ExportOptions{SegmentEntities: sized(50)}
	whole := export(t, src, opts)
	bb := env.Container(t).NewBlockBlobClient("twice.gz")
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { _, errs[i] = backup.ExportBlob(t.Context(), src, bb, opts) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, backup.ErrBlobChanged) && !errors.Is(err, backup.ErrInvalid) {
			t.Fatalf("ExportBlob: %v", err)
		}
	}
	if errs[0] != nil && errs[1] != nil {
		if _, err := backup.ExportBlob(t.Context(), src, bb, opts); err != nil {
			t.Fatalf("a third run to finish: %v", err)
		}
	}
	if data, _, _ := blobBytes(t, bb); !bytes.Equal(data, whole) {
		t.Fatalf("the blob holds %d bytes, one export %d", len(data), len(whole))
	}
}

// A blob that ExportBlob wrote and someone else then changed (its token
// kept, a block added) is not resumed into a corrupt backup: ExportBlob
// refuses it, naming the mismatch.
func TestExportBlobRefusesABlobChangedBySomeoneElse(t *testing.T) {
	src := newTable(t)
	load(t, src, 120)
	opts := backup.ExportOptions{SegmentEntities: 50}
	bb := env.Container(t).NewBlockBlobClient("changed.gz")
	stop := errors.New("stop")
	seen := 0
	o := opts
	o.Checkpoint = func(backup.Checkpoint) error {
		if seen++; seen == 2 {
			return stop
		}
		return nil
	}
	if _, err := backup.ExportBlob(t.Context(), src, bb, o); !errors.Is(err, stop) {
		t.Fatal(err)
	}
	_, token, _ := blobBytes(t, bb)
	list, err := bb.GetBlockList(t.Context(), blockblob.BlockListTypeCommitted, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, b := range list.CommittedBlocks {
		ids = append(ids, *b.Name)
	}
	extra := base64.StdEncoding.EncodeToString([]byte("tablekit-segment-9999999999"))
	if _, err := bb.StageBlock(t.Context(), extra, readSeekCloser([]byte("junk")), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.CommitBlockList(t.Context(), append(ids, extra), &blockblob.CommitBlockListOptions{Metadata: map[string]*string{backup.MetadataToken: &token}}); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.ExportBlob(t.Context(), src, bb, opts); !errors.Is(err, backup.ErrInvalid) || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("resuming a changed blob: %v, want ErrInvalid naming the byte counts", err)
	}
}

func ptr[T any](v T) *T { return &v }

type readSeeker struct{ *bytes.Reader }

func (readSeeker) Close() error { return nil }

func readSeekCloser(b []byte) io.ReadSeekCloser { return readSeeker{bytes.NewReader(b)} }

// Ranges are checked in the service's order of keys, where a supplementary
// character (a surrogate pair in UTF-16) sorts before U+E000–U+FFFF,
// unlike Go's byte order: such a range is taken and exports its entity;
// its inverse is refused before any request.
func TestExportRangesInTheServicesOrder(t *testing.T) {
	tbl := newTable(t)
	d := entity.DynamicEntity{PartitionKey: "😀x", RowKey: "r"}
	d.Set("S", "emoji")
	if err := tbl.Insert(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	got := lines(t, export(t, tbl, backup.ExportOptions{Ranges: []backup.Range{{From: "😀", To: "\uE000"}}}))
	if len(got) != 2 || !strings.Contains(got[1], "emoji") {
		t.Fatalf("the range 😀 to U+E000 exported %q, want its one entity", got)
	}
	if _, err := backup.Export(t.Context(), tbl, io.Discard, backup.ExportOptions{Ranges: []backup.Range{{From: "\uE000", To: "😀"}}}); !errors.Is(err, backup.ErrInvalid) {
		t.Fatalf("the inverted range: %v, want ErrInvalid", err)
	}
}

// countHook is a per-retry policy that runs fn once, before the request
// number at (counting from 1) is sent.
type countHook struct {
	mu sync.Mutex
	n  int
	at int
	fn func()
}

func (h *countHook) Do(req *policy.Request) (*http.Response, error) {
	h.mu.Lock()
	h.n++
	run := h.n == h.at
	h.mu.Unlock()
	if run {
		h.fn()
	}
	return req.Next()
}

// ExportCSV reads the table twice; an entity written between the two
// reads with a property the first did not see fails the export with an
// error naming the entity's keys and the property, rather than writing a
// CSV without it.
func TestExportCSVNamesAPropertyAddedBetweenItsReads(t *testing.T) {
	src, _ := seamRows(t)
	h := &countHook{at: 2, fn: func() {
		d := entity.DynamicEntity{PartitionKey: "a", RowKey: "late"}
		d.Set("Extra", "new")
		if err := src.Insert(context.Background(), &d); err != nil {
			t.Error(err)
		}
	}}
	err := backup.ExportCSV(t.Context(), viewOf(t, env.With(h), src.Name()), io.Discard, filter.Expr{})
	if err == nil || !strings.Contains(err.Error(), `"late"`) || !strings.Contains(err.Error(), `"Extra"`) {
		t.Fatalf("ExportCSV: %v, want an error naming the entity late and its property Extra", err)
	}
}
