package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/cmd/tablekit/internal/state"
	"github.com/tablekit/tablekit/entity"
)

const importUsage = `--table NAME --in FILE|-|blob:CONTAINER/NAME|BLOB-URL [flags]

Writes the entities of an export back into a table (created when missing):
package backup's gzip JSON Lines, a split export's manifest (every part's
size and sha256 checked before the first write), or Storage Explorer's
typed CSV (--format csv, or an --in ending in .csv). A line that cannot be
written — undecodable, an invalid key or property, refused by the service —
is reported with its line number and keys, and the import goes on (exit 3).
Resumable: Ctrl-C prints --resume TOKEN; --checkpoint FILE saves it after
every segment whose entities are all settled.

Modes (--mode):
  insert-or-replace  write every entity, replacing a stored one (default; a repeated import is harmless)
  insert             write only entities the table lacks; a stored entity with other
                     properties is a conflict, reported and left alone (exit 3)`

const importExample = `  tablekit import --table Orders --in orders.jsonl.gz --checkpoint orders.import
  tablekit import --table Orders --in backups/orders.json          # a split export's manifest
  tablekit import --table Orders --in export.csv --mode insert
  gunzip -c orders.jsonl.gz | gzip | tablekit import --table Orders --in -`

type importJob struct {
	V        int    `json:"v"`
	Cmd      string `json:"cmd"`
	Table    string `json:"table"`
	In       string `json:"in"`
	Format   string `json:"format"`
	Mode     string `json:"mode"`
	Entities int64  `json:"entities"`
}

func runImport(c *cli, args []string) int {
	fs := c.flags(importUsage, importExample)
	var cf, bf connFlags
	cf.register(fs, "", "table's")
	bf.register(fs, "blob-", "blob's")
	table := fs.String("table", "", "table to write")
	in := fs.String("in", "", "FILE, - for stdin, blob:CONTAINER/NAME or a blob URL")
	format := fs.String("format", "", "jsonl (a backup, or a split export's manifest) or csv; default: csv for an --in ending in .csv, else what the input holds")
	mode := fs.String("mode", "insert-or-replace", "insert-or-replace or insert")
	segment := fs.Int("segment", 1000, "entities written between checkpoints")
	parallel := fs.Int("parallel", 4, "partitions written at once")
	resume := fs.String("resume", "", "token printed by an interrupted run (or @FILE)")
	checkpoint := fs.String("checkpoint", "", "save the resume token to this file after every settled segment")
	if code, done := c.parse(fs, args, 0); done {
		return code
	}
	if *in == "" {
		return c.fail(usagef("--in is required (a file, - for stdin, or a blob)"))
	}
	var bmode backup.Mode
	switch *mode {
	case "insert-or-replace", "upsert":
		bmode, *mode = backup.Upsert, "insert-or-replace"
	case "insert":
		bmode = backup.Insert
	default:
		return c.fail(usagef("--mode %q: want insert-or-replace or insert", *mode))
	}
	if *format == "" && strings.HasSuffix(strings.ToLower(*in), ".csv") {
		*format = "csv"
	}
	if *format != "" && *format != "jsonl" && *format != "csv" {
		return c.fail(usagef("--format %q: want jsonl or csv", *format))
	}
	if *segment < 1 || *parallel < 1 {
		return c.fail(usagef("--segment and --parallel must be positive"))
	}
	if *in == "-" && *resume != "" {
		return c.fail(usagef("an import from stdin cannot be resumed: its input cannot be read again"))
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
	work, cancelWork := c.workContext()
	defer cancelWork()

	// The input, and its size when known (for the ETA).
	var r io.Reader
	var size int64
	inLabel := *in
	switch {
	case *in == "-":
		r = c.stdin
	case isBlobSpec(*in):
		bb, label, err := c.blobClient(*in, cn, &bf)
		if err != nil {
			return c.fail(err)
		}
		inLabel = label
		resp, err := bb.DownloadStream(work, nil)
		if err != nil {
			return c.fail(fmt.Errorf("read %s: %w", label, err))
		}
		body := resp.NewRetryReader(work, nil)
		defer body.Close()
		r = body
		if resp.ContentLength != nil {
			size = *resp.ContentLength
		}
	default:
		f, err := os.Open(*in)
		if err != nil {
			return c.fail(usagef("--in: %v", err))
		}
		defer f.Close()
		r = f
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(512)
	r = br
	var parts []partInfo
	switch {
	case *format == "csv":
	case bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("{")) && bytes.Contains(head, []byte(`"tablekit.manifest"`)):
		if isBlobSpec(*in) || *in == "-" {
			return c.fail(usagef("a manifest names part files: give it as a file"))
		}
		mr, total, ps, err := openManifest(*in, br)
		if err != nil {
			return c.fail(err)
		}
		defer mr.Close()
		r, size, parts, *format = mr, total, ps, "jsonl"
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		*format = "jsonl"
	case *format == "":
		*format = "csv" // not gzip: read as CSV (ImportCSV says what is wrong with it)
	}
	job := importJob{V: 1, Cmd: "import", Table: cn.label + name, In: inLabel, Format: *format, Mode: *mode}
	if *resume != "" {
		tok, err := state.Load(*resume)
		if err != nil {
			return c.fail(usagef("--resume: %v", err))
		}
		var old importJob
		if err := state.Decode(tok, &old); err != nil {
			return c.fail(fmt.Errorf("--resume: %w", err))
		}
		if old.Cmd != job.Cmd || old.Table != job.Table || old.In != job.In || old.Format != job.Format || old.Mode != job.Mode {
			return c.fail(usagef("--resume: the token is of another import (%s into %s, mode %s): give the same --in, --table, --format and --mode", old.In, old.Table, old.Mode))
		}
		job.Entities = old.Entities
		c.say("resuming after %d entities", job.Entities)
	}
	if err := tbl.CreateTableIfNotExists(work); err != nil && !errors.Is(err, entity.ErrUnauthorized) {
		return c.fail(fmt.Errorf("create the table: %w", err))
	}
	prog := c.startProgress("entities", job.Entities)
	defer prog.stop()
	var token string
	save := func() error {
		tok, err := state.Encode(job)
		if err != nil {
			return err
		}
		token = tok
		prog.setToken(tok)
		if *checkpoint != "" {
			if err := state.Save(*checkpoint, tok); err != nil {
				return fmt.Errorf("--checkpoint: %w", err)
			}
		}
		return nil
	}
	if *in != "-" {
		if err := save(); err != nil {
			return c.fail(err)
		}
	}
	opts := backup.ImportOptions{
		Mode: bmode, SegmentEntities: *segment, Concurrency: *parallel, ResumeAfter: job.Entities,
		Checkpoint: func(ck backup.ImportCheckpoint) error {
			job.Entities = ck.Entities
			if *in != "-" {
				if err := save(); err != nil {
					return err
				}
			}
			if c.stopped() {
				return errStop
			}
			return nil
		},
		Progress: func(p backup.Progress) {
			prog.set(p.Entities)
			if size > 0 {
				prog.setFraction(float64(p.Bytes) / float64(size))
			}
		},
	}
	var sum backup.ImportSummary
	if *format == "csv" {
		sum, err = backup.ImportCSV(work, tbl, r, opts)
	} else {
		sum, err = backup.Import(work, tbl, r, opts)
	}
	prog.stop()
	for _, f := range sum.Failed {
		c.itemFailed("failed", f.Line, f.PartitionKey, f.RowKey, f.Err)
	}
	for _, f := range sum.Conflicts {
		c.itemFailed("conflict", f.Line, f.PartitionKey, f.RowKey, errors.New("stored with other properties; left as it is"))
	}
	var ie *backup.ImportError
	if err != nil && !errors.As(err, &ie) {
		done := fmt.Sprintf("%d entities settled", job.Entities)
		if c.stopped() && (errors.Is(err, errStop) || errors.Is(err, context.Canceled)) {
			if *in == "-" {
				return c.interrupted(done+" (stdin cannot be read again: import the rest from a file)", "", "")
			}
			return c.interrupted(done, token, *checkpoint)
		}
		code := c.fail(err)
		if token != "" {
			c.warn("%s; to resume, run the same command with: --resume %s", done, token)
		}
		return code
	}
	status, code := "done", exitOK
	if len(sum.Failed) > 0 || len(sum.Conflicts) > 0 {
		status, code = "partial", exitPartial
	}
	el := prog.elapsed()
	text := fmt.Sprintf("imported %s into %s: %d entities, %d written, %d already there, %d conflicts, %d failed, in %s (%.0f entities/s), %d storage transactions\n",
		inLabel, name, sum.Entities, sum.Written, sum.Existing, len(sum.Conflicts), len(sum.Failed), el.Round(1e7), prog.rate(), c.meter.Snapshot().Total())
	c.summary(map[string]any{"command": "import", "status": status, "entities": sum.Entities, "written": sum.Written, "existing": sum.Existing,
		"conflicts": len(sum.Conflicts), "failed": len(sum.Failed), "parts": len(parts), "seconds": el.Seconds(), "rate": prog.rate(), "transactions": c.meter.Snapshot().Total()}, text, false)
	return code
}

// openManifest reads a split export's manifest, checks every part's size
// and sha256 before anything is written, and returns the parts joined.
func openManifest(path string, r io.Reader) (io.ReadCloser, int64, []partInfo, error) {
	var m manifest
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return nil, 0, nil, usagef("%s: not a manifest: %v", path, err)
	}
	if m.Manifest != 1 || m.Format != "jsonl.gz" {
		return nil, 0, nil, usagef("%s: a manifest of version %d, format %q: this tablekit reads version 1, jsonl.gz", path, m.Manifest, m.Format)
	}
	dir := filepath.Dir(path)
	var files []*os.File
	var readers []io.Reader
	var total int64
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, p := range m.Parts {
		if p.Name != filepath.Base(p.Name) {
			closeAll()
			return nil, 0, nil, usagef("%s: part %q is not a file name beside the manifest", path, p.Name)
		}
		f, err := os.Open(filepath.Join(dir, p.Name))
		if err != nil {
			closeAll()
			return nil, 0, nil, fmt.Errorf("part of %s: %w", path, err)
		}
		files = append(files, f)
		h := sha256.New()
		n, err := io.Copy(h, f)
		if err != nil {
			closeAll()
			return nil, 0, nil, fmt.Errorf("read part %s: %w", p.Name, err)
		}
		if n != p.Bytes || hex.EncodeToString(h.Sum(nil)) != p.SHA256 {
			closeAll()
			return nil, 0, nil, fmt.Errorf("part %s of %s: %d bytes with sha256 %s, where the manifest says %d bytes, %s: the part is damaged or from another export; nothing was written",
				p.Name, path, n, hex.EncodeToString(h.Sum(nil))[:12], p.Bytes, p.SHA256[:min(12, len(p.SHA256))])
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			closeAll()
			return nil, 0, nil, err
		}
		readers = append(readers, f)
		total += n
	}
	return multiCloser{io.MultiReader(readers...), closeAll}, total, m.Parts, nil
}

type multiCloser struct {
	io.Reader
	close func()
}

func (m multiCloser) Close() error { m.close(); return nil }
