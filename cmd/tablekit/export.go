package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/cmd/tablekit/internal/keyspace"
	"github.com/tablekit/tablekit/cmd/tablekit/internal/state"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
)

const exportUsage = `--table NAME --out FILE|-|blob:CONTAINER/NAME|BLOB-URL [flags]

Writes a table (all of it, what --filter selects, or a PartitionKey range) as
package backup's gzip JSON Lines (--format jsonl, the default) or as Azure
Storage Explorer's typed CSV (--format csv, or an --out ending in .csv; one
ending in .csv.gz is the CSV gzip-compressed).

A file is written as FILE.partial and renamed when complete; with
--split-size, --out names a manifest and the data goes to parts
FILE.part00001.jsonl.gz, … of about that size, each cut at a segment's end,
the manifest (counts and sha256 checksums) written last. A blob is written
in blocks committed with its resume position in its metadata. JSON Lines
exports are resumable: Ctrl-C prints --resume TOKEN; --checkpoint FILE
saves it after every segment (the output is then synced first). CSV exports
read the table twice (once for the columns) and are not resumable: an
interrupted one leaves no file.`

const exportExample = `  tablekit export --table Orders --out orders.jsonl.gz --checkpoint orders.ck
  tablekit export --table Orders --out backups/orders.json --split-size 256MiB
  tablekit export --table Orders --out blob:backups/orders-2024-05-01.jsonl.gz
  tablekit export --table Orders --format csv --out - --filter "PartitionKey eq 'Sales'"`

type exportJob struct {
	V        int              `json:"v"`
	Cmd      string           `json:"cmd"`
	Table    string           `json:"table"`
	Out      string           `json:"out"`
	Filter   string           `json:"filter,omitempty"`
	Scope    string           `json:"scope"`
	Ranges   []keyspace.Range `json:"ranges"`
	Segment  int              `json:"segment"`
	Split    int64            `json:"split,omitempty"`
	Backup   string           `json:"backup,omitempty"` // backup's token
	Bytes    int64            `json:"bytes"`
	Entities int64            `json:"entities"`
	Parts    []partInfo       `json:"parts,omitempty"` // finished parts
	PartFrom int64            `json:"partFrom,omitempty"`
}

// partInfo is one part of a split export, as the manifest lists it.
type partInfo struct {
	Name     string `json:"name"`
	Bytes    int64  `json:"bytes"`
	Entities int64  `json:"entities"`
	SHA256   string `json:"sha256"`
}

// manifest is what a split export writes last.
type manifest struct {
	Manifest int        `json:"tablekit.manifest"`
	Table    string     `json:"table"`
	Format   string     `json:"format"`
	Filter   string     `json:"filter,omitempty"`
	Scope    string     `json:"scope"`
	Entities int64      `json:"entities"`
	Bytes    int64      `json:"bytes"`
	Parts    []partInfo `json:"parts"`
	Created  time.Time  `json:"created"`
}

func runExport(c *cli, args []string) int {
	fs := c.flags(exportUsage, exportExample)
	var cf, bf connFlags
	cf.register(fs, "", "table's")
	bf.register(fs, "blob-", "blob's")
	var rf rangeFlags
	rf.register(fs, true)
	table := fs.String("table", "", "table to export")
	out := fs.String("out", "", "FILE, - for stdout, blob:CONTAINER/NAME, or a blob URL (with a SAS for another account)")
	format := fs.String("format", "", "jsonl (gzip JSON Lines of package backup) or csv (Storage Explorer); default: csv for an --out ending in .csv or .csv.gz (gzip), else jsonl")
	filterText := fs.String("filter", "", "OData filter of the entities to export")
	splitText := fs.String("split-size", "", "write parts of about this size (such as 256MiB) and a manifest (--out names the manifest; files only)")
	segment := fs.Int("segment", 1000, "entities per gzip member (and between checkpoints)")
	resume := fs.String("resume", "", "token printed by an interrupted run (or @FILE)")
	checkpoint := fs.String("checkpoint", "", "save the resume token to this file after every segment")
	force := fs.Bool("force", false, "overwrite an existing output file")
	if code, done := c.parse(fs, args, 0); done {
		return code
	}
	if *out == "" {
		return c.fail(usagef("--out is required (a file, - for stdout, or a blob)"))
	}
	if *format == "" {
		*format = "jsonl"
		if lo := strings.ToLower(*out); strings.HasSuffix(lo, ".csv") || strings.HasSuffix(lo, ".csv.gz") {
			*format = "csv"
		}
	}
	if *format != "jsonl" && *format != "csv" {
		return c.fail(usagef("--format %q: want jsonl or csv", *format))
	}
	var split int64
	if *splitText != "" {
		var err error
		if split, err = parseSize(*splitText); err != nil {
			return c.fail(usagef("--split-size: %v", err))
		}
		if *format != "jsonl" || *out == "-" || isBlobSpec(*out) {
			return c.fail(usagef("--split-size writes JSON Lines parts to files: give a file --out and --format jsonl"))
		}
	}
	if *segment < 1 {
		return c.fail(usagef("--segment must be positive"))
	}
	if *format == "csv" && (*resume != "" || *checkpoint != "") {
		return c.fail(usagef("CSV exports are not resumable: --resume and --checkpoint are for --format jsonl"))
	}
	user, err := parseFilter(*filterText)
	if err != nil {
		return c.fail(err)
	}
	cn, err := c.connect(&cf, true)
	if err != nil {
		return c.fail(err)
	}
	name := tableName(cn, *table)
	tbl, err := c.table(cn, name)
	if err != nil {
		return c.fail(err)
	}
	var bb *blockblob.Client
	outLabel := *out
	if isBlobSpec(*out) {
		if bb, outLabel, err = c.blobClient(*out, cn, &bf); err != nil {
			return c.fail(err)
		}
	}
	filterStr, _ := user.Build()
	job := exportJob{V: 1, Cmd: "export", Table: cn.label + name, Out: outLabel, Filter: filterStr, Segment: *segment, Split: split}
	if *resume != "" {
		if *out == "-" {
			return c.fail(usagef("an export to stdout cannot be resumed"))
		}
		tok, err := state.Load(*resume)
		if err != nil {
			return c.fail(usagef("--resume: %v", err))
		}
		var old exportJob
		if err := state.Decode(tok, &old); err != nil {
			return c.fail(fmt.Errorf("--resume: %w", err))
		}
		if old.Cmd != job.Cmd || old.Table != job.Table || old.Out != job.Out || old.Filter != job.Filter || old.Segment != job.Segment || old.Split != job.Split {
			return c.fail(usagef("--resume: the token is of another export (%s to %s, filter %q): give the same --table, --out, --filter, --segment and --split-size", old.Table, old.Out, old.Filter))
		}
		job = old
		c.say("resuming after %d entities, %s", job.Entities, job.Scope)
	} else {
		if *out != "-" && bb == nil && !*force {
			if _, err := os.Stat(*out); err == nil {
				return c.fail(usagef("%s exists: give --force to overwrite it, or --resume to go on with an interrupted export", *out))
			}
		}
		pieces := rf
		if *format == "csv" {
			pieces.parallel = 1 // one range: ExportCSV reads through one filter
		}
		rs, scope, err := c.planRanges(c.ctx, tbl, user, pieces)
		if err != nil {
			if c.stopped() {
				return c.interrupted("nothing exported", "", "")
			}
			return c.fail(err)
		}
		job.Scope = scope
		for _, r := range rs {
			job.Ranges = append(job.Ranges, r.Range)
		}
	}
	if bb != nil {
		if err := c.createContainers(c.ctx); err != nil {
			return c.fail(err)
		}
	}
	if *format == "csv" {
		return c.exportCSV(tbl, user, job, *out, bb)
	}
	ex := &exporter{c: c, tbl: tbl, name: name, user: user, job: &job, parallel: rf.parallel, checkpoint: *checkpoint}
	return ex.run(*out, bb)
}

type exporter struct {
	c          *cli
	tbl        *entity.Table[entity.DynamicEntity]
	name       string
	user       filter.Expr
	job        *exportJob
	parallel   int
	checkpoint string
	token      string
	prog       *progress
}

// emptyBackup is a backup of no entity: the header line in one gzip member.
func emptyBackup() []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, "{\"tablekit.backup\":1}\n")
	zw.Close()
	return b.Bytes()
}

func (ex *exporter) run(out string, bb *blockblob.Client) int {
	c, job := ex.c, ex.job
	work, cancelWork := c.workContext()
	defer cancelWork()
	ex.prog = c.startProgress("entities", job.Entities)
	defer ex.prog.stop()
	ranges := make([]backup.Range, len(job.Ranges))
	for i, r := range job.Ranges {
		ranges[i] = backup.Range{From: r.From, To: r.To}
	}
	var sw *splitWriter
	var f *os.File
	var w io.Writer
	partial := out + ".partial"
	switch {
	case out == "-":
		w = c.data
	case bb != nil:
	case job.Split > 0:
		var err error
		if sw, err = openSplit(job); err != nil {
			return c.fail(err)
		}
		w = sw
	default:
		var err error
		if f, err = openPartial(partial, job.Bytes, job.Backup != ""); err != nil {
			return c.fail(err)
		}
		defer f.Close()
		w = f
	}
	opts := backup.ExportOptions{
		Filter: ex.user, Ranges: ranges, Parallel: ex.parallel, SegmentEntities: job.Segment, Resume: job.Backup,
		Progress: func(p backup.Progress) {
			ex.prog.set(p.Entities)
			ex.prog.setExtra(fmt.Sprintf("%s bytes", group(p.Bytes)))
		},
		Checkpoint: func(ck backup.Checkpoint) error {
			if sw != nil {
				if err := sw.checkpoint(ck, ex.checkpoint != ""); err != nil {
					return err
				}
				job.Parts, job.PartFrom = sw.parts, sw.from
			}
			if f != nil && ex.checkpoint != "" {
				if err := f.Sync(); err != nil {
					return fmt.Errorf("sync %s: %w", partial, err)
				}
			}
			job.Backup, job.Bytes, job.Entities = ck.Token, ck.Bytes, ck.Entities
			if err := ex.save(); err != nil {
				return err
			}
			if c.stopped() {
				return errStop
			}
			return nil
		},
	}
	var sum backup.Summary
	var err error
	switch {
	case len(job.Ranges) == 0: // an empty shard: a backup of nothing
		b := emptyBackup()
		switch {
		case bb != nil:
			_, err = bb.UploadBuffer(work, b, nil)
		default:
			_, err = w.Write(b)
		}
		sum = backup.Summary{Bytes: int64(len(b))}
		job.Bytes = sum.Bytes
		if err == nil && sw != nil {
			err = sw.checkpoint(backup.Checkpoint{Bytes: sum.Bytes}, false)
			job.Parts, job.PartFrom = sw.parts, sw.from
		}
	case bb != nil:
		opts.Resume = ""
		sum, err = backup.ExportBlob(work, ex.tbl, bb, opts)
	default:
		sum, err = backup.Export(work, ex.tbl, w, opts)
	}
	ex.prog.stop()
	done := fmt.Sprintf("%d entities exported (%d bytes)", job.Entities, job.Bytes)
	if err != nil {
		// Leave the file as the last checkpoint counts it: whole segments.
		if f != nil {
			f.Truncate(job.Bytes)
		}
		if sw != nil {
			sw.abandon(job.Bytes)
		}
		if c.stopped() && (errors.Is(err, errStop) || errors.Is(err, context.Canceled)) {
			if out == "-" {
				return c.interrupted(done+" to stdout", "", "")
			}
			return c.interrupted(done, ex.token, ex.checkpoint)
		}
		code := c.fail(err)
		if ex.token != "" && out != "-" {
			c.warn("%s; to resume, run the same command with: --resume %s", done, ex.token)
		}
		return code
	}
	job.Entities, job.Bytes = sum.Entities, sum.Bytes
	files := []string{}
	switch {
	case f != nil:
		if err := f.Close(); err != nil {
			return c.fail(err)
		}
		if err := os.Rename(partial, out); err != nil {
			return c.fail(err)
		}
		files = append(files, out)
	case sw != nil:
		if err := sw.finish(job.Entities); err != nil {
			return c.fail(err)
		}
		m := manifest{Manifest: 1, Table: job.Table, Format: "jsonl.gz", Filter: job.Filter, Scope: job.Scope, Entities: job.Entities, Bytes: job.Bytes, Parts: sw.parts, Created: time.Now().UTC()}
		b, _ := json.MarshalIndent(m, "", "  ")
		if err := state.WriteFileAtomic(out, append(b, '\n')); err != nil {
			return c.fail(err)
		}
		for _, p := range sw.parts {
			files = append(files, filepath.Join(filepath.Dir(out), p.Name))
		}
		files = append(files, out)
	case bb != nil:
		files = append(files, job.Out)
	}
	for _, inv := range sum.Invalid {
		c.itemFailed("exported as stored, but an import will refuse it", inv.Line, inv.PartitionKey, inv.RowKey, inv.Err)
	}
	status, code := "done", exitOK
	if len(sum.Invalid) > 0 {
		status, code = "partial", exitPartial
	}
	el := ex.prog.elapsed()
	text := fmt.Sprintf("exported %s: %d entities, %d bytes, to %s in %s (%.0f entities/s), %d storage transactions\n",
		ex.name, job.Entities, job.Bytes, strings.Join(files, ", "), el.Round(1e7), ex.prog.rate(), c.meter.Snapshot().Total())
	c.summary(map[string]any{"command": "export", "status": status, "entities": job.Entities, "bytes": job.Bytes, "files": files, "parts": job.Parts,
		"invalid": len(sum.Invalid), "scope": job.Scope, "seconds": el.Seconds(), "rate": ex.prog.rate(), "transactions": c.meter.Snapshot().Total()}, text, out == "-")
	return code
}

func (ex *exporter) save() error {
	tok, err := state.Encode(ex.job)
	if err != nil {
		return err
	}
	ex.token = tok
	ex.prog.setToken(tok)
	if ex.checkpoint != "" {
		if err := state.Save(ex.checkpoint, tok); err != nil {
			return fmt.Errorf("--checkpoint: %w", err)
		}
	}
	return nil
}

// openPartial opens FILE.partial: new and empty, or (resuming) cut to the
// bytes the checkpoint counts.
func openPartial(path string, size int64, resuming bool) (*os.File, error) {
	if !resuming {
		return os.Create(path)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("resume: %w (the interrupted export's partial file is gone: start over without --resume)", err)
	}
	st, err := f.Stat()
	if err == nil && st.Size() < size {
		err = fmt.Errorf("resume: %s holds %d bytes, fewer than the %d its token counts: start over without --resume", path, st.Size(), size)
	}
	if err == nil {
		err = f.Truncate(size)
	}
	if err == nil {
		_, err = f.Seek(size, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// splitWriter writes an export into parts of about limit bytes, each cut
// at a segment's end (a checkpoint), so that every part is whole gzip
// members and the parts joined are the export.
type splitWriter struct {
	base  string // the manifest's path without .json
	limit int64
	parts []partInfo
	from  int64 // entities before the current part

	cur     *os.File
	curSize int64
	curHash hash.Hash
}

func partsBase(manifestPath string) string {
	return strings.TrimSuffix(strings.TrimSuffix(manifestPath, ".json"), ".manifest")
}

func (s *splitWriter) partPath(i int) string {
	return fmt.Sprintf("%s.part%05d.jsonl.gz", s.base, i)
}

func openSplit(job *exportJob) (*splitWriter, error) {
	s := &splitWriter{base: partsBase(job.Out), limit: job.Split, parts: job.Parts, from: job.PartFrom}
	var done int64
	for _, p := range s.parts {
		done += p.Bytes
	}
	cur := job.Bytes - done
	// Remove parts a crash left beyond the checkpoint.
	for i := len(s.parts) + 2; ; i++ {
		if err := os.Remove(s.partPath(i)); err != nil {
			break
		}
	}
	if job.Backup == "" || cur == 0 {
		os.Remove(s.partPath(len(s.parts) + 1))
		return s, nil
	}
	f, err := openPartial(s.partPath(len(s.parts)+1), cur, true)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, cur)); err != nil {
		f.Close()
		return nil, err
	}
	s.cur, s.curSize, s.curHash = f, cur, h
	return s, nil
}

func (s *splitWriter) Write(p []byte) (int, error) {
	if s.cur == nil {
		f, err := os.Create(s.partPath(len(s.parts) + 1))
		if err != nil {
			return 0, err
		}
		s.cur, s.curSize, s.curHash = f, 0, sha256.New()
	}
	n, err := s.cur.Write(p)
	s.curHash.Write(p[:n])
	s.curSize += int64(n)
	return n, err
}

// checkpoint closes the current part when it has reached the limit.
func (s *splitWriter) checkpoint(ck backup.Checkpoint, sync bool) error {
	if s.cur == nil {
		return nil
	}
	if sync {
		if err := s.cur.Sync(); err != nil {
			return err
		}
	}
	if s.curSize < s.limit {
		return nil
	}
	return s.closePart(ck.Entities)
}

func (s *splitWriter) closePart(entities int64) error {
	if err := s.cur.Sync(); err != nil {
		return err
	}
	if err := s.cur.Close(); err != nil {
		return err
	}
	s.parts = append(s.parts, partInfo{Name: filepath.Base(s.cur.Name()), Bytes: s.curSize, Entities: entities - s.from, SHA256: hex.EncodeToString(s.curHash.Sum(nil))})
	s.from = entities
	s.cur = nil
	return nil
}

// finish closes the last part; entities is the export's total.
func (s *splitWriter) finish(entities int64) error {
	if s.cur == nil {
		return nil
	}
	return s.closePart(entities)
}

func (s *splitWriter) abandon(bytes int64) {
	if s.cur != nil {
		var done int64
		for _, p := range s.parts {
			done += p.Bytes
		}
		s.cur.Truncate(bytes - done)
		s.cur.Close()
		s.cur = nil
	}
}

// exportCSV writes Storage Explorer's CSV through package backup.
func (c *cli) exportCSV(tbl *entity.Table[entity.DynamicEntity], user filter.Expr, job exportJob, out string, bb *blockblob.Client) int {
	work, cancelWork := c.workContext()
	defer cancelWork()
	// Stop at the interrupt: a CSV export is not resumable, so nothing of
	// it is kept.
	ctx, cancel := context.WithCancel(work)
	defer cancel()
	stopAt := context.AfterFunc(c.ctx, cancel)
	defer stopAt()
	f := user
	if len(job.Ranges) == 1 {
		f = rangeFilter(user, job.Ranges[0])
	}
	prog := c.startProgress("entities", 0)
	defer prog.stop()
	cw := &countWriter{}
	// An --out ending in .csv.gz is the CSV gzip-compressed, as import
	// reads it.
	exportCSV := func(w io.Writer) error { return backup.ExportCSV(ctx, tbl, w, f) }
	if strings.HasSuffix(strings.ToLower(job.Out), ".csv.gz") {
		exportCSV = func(w io.Writer) error {
			zw := gzip.NewWriter(w)
			if err := backup.ExportCSV(ctx, tbl, zw, f); err != nil {
				return err
			}
			return zw.Close()
		}
	}
	var err error
	var files []string
	switch {
	case len(job.Ranges) == 0:
		f = filter.And(filter.PK("\uffff"), filter.Lt(filter.PartitionKeyProperty, "\uffff")) // an empty shard: no entity
		fallthrough
	default:
		switch {
		case out == "-":
			cw.w = c.data
			err = exportCSV(cw)
		case bb != nil:
			pr, pw := io.Pipe()
			cw.w = pw
			go func() { pw.CloseWithError(exportCSV(cw)) }()
			_, err = bb.UploadStream(ctx, pr, nil)
			pr.CloseWithError(err)
			files = append(files, job.Out)
		default:
			partial := out + ".partial"
			var fh *os.File
			if fh, err = os.Create(partial); err != nil {
				return c.fail(err)
			}
			cw.w = fh
			err = exportCSV(cw)
			if cerr := fh.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Rename(partial, out)
			} else {
				os.Remove(partial)
			}
			files = append(files, out)
		}
	}
	prog.stop()
	if err != nil {
		if c.stopped() {
			return c.interrupted(fmt.Sprintf("%d bytes of CSV written and discarded", cw.n), "", "")
		}
		return c.fail(err)
	}
	text := fmt.Sprintf("exported %d bytes of CSV to %s, %d storage transactions\n", cw.n, strings.Join(files, ", "), c.meter.Snapshot().Total())
	if out == "-" {
		text = fmt.Sprintf("exported %d bytes of CSV, %d storage transactions\n", cw.n, c.meter.Snapshot().Total())
	}
	c.summary(map[string]any{"command": "export", "status": "done", "format": "csv", "bytes": cw.n, "files": files, "scope": job.Scope, "transactions": c.meter.Snapshot().Total()}, text, out == "-")
	return exitOK
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
