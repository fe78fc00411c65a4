package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
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
	"sync/atomic"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/cmd/tablekit/internal/state"
)

const importUsage = `--table NAME --in FILE|-|blob:CONTAINER/NAME|BLOB-URL [flags]

Writes the entities of an export back into a table. A missing table is
created, and the command says so on stderr ("created table NAME"). The input
is package backup's JSON Lines (an --in ending in .jsonl.gz or .jsonl,
gzip or not), a split export's manifest (.json; every part's size and
sha256 checked before the first write), or Storage Explorer's typed CSV
(.csv or .csv.gz); --format jsonl or csv says it for any other name, which
is refused without it. From stdin (--in -) the format is what the input
holds: gzip or a backup's header is JSON Lines, else CSV. A line that cannot be
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
	format := fs.String("format", "", "jsonl (a backup, or a split export's manifest) or csv; default: from --in's name (.jsonl.gz, .jsonl, .json, .csv, .csv.gz), or for stdin what the input holds")
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
	if *format != "" && *format != "jsonl" && *format != "csv" {
		return c.fail(usagef("--format %q: want jsonl or csv", *format))
	}
	if *format == "" && *in != "-" {
		f, ok := formatOfName(*in)
		if !ok {
			return c.fail(usagef("--in %s: cannot tell its format from its name: want a name ending in .jsonl.gz, .jsonl, .csv.gz or .csv (or .json, a split export's manifest), or give --format jsonl or csv", redactURL(*in)))
		}
		*format = f
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
	// The input as read so far, for the progress's fraction: an input
	// read through gzip or recompressed counts its own bytes.
	raw := &countingReader{r: r}
	br := bufio.NewReaderSize(raw, 64<<10)
	head, _ := br.Peek(512)
	r = br
	gzipped := len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b
	bytesRead := func(p backup.Progress) int64 { return p.Bytes }
	var parts []partInfo
	switch {
	case *format == "csv":
		if gzipped {
			zr, err := gzip.NewReader(br)
			if err != nil {
				return c.fail(usagef("--in %s: %v", inLabel, err))
			}
			defer zr.Close()
			r, bytesRead = zr, func(backup.Progress) int64 { return raw.n.Load() }
		}
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
	case gzipped:
		*format = "jsonl"
	case *format == "jsonl" || bytes.HasPrefix(head, []byte(`{"tablekit.backup"`)):
		// JSON Lines without gzip: compressed here in members of
		// --segment lines, as Import reads a backup.
		*format = "jsonl"
		zr := gzipMembers(br, *segment)
		defer zr.Close()
		r, bytesRead = zr, func(backup.Progress) int64 { return raw.n.Load() }
	default:
		*format = "csv" // stdin, neither gzip nor a backup: read as CSV (ImportCSV says what is wrong with it)
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
	if err := c.ensureTable(work, tbl, name); err != nil {
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
				prog.setFraction(float64(bytesRead(p)) / float64(size))
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

// formatOfName is the format an --in's name says (a blob URL's path, its
// query left out): jsonl for .jsonl.gz, .jsonl and .json (a split
// export's manifest), csv for .csv and .csv.gz; ok is false for any other.
func formatOfName(in string) (format string, ok bool) {
	name := strings.ToLower(in)
	if isBlobSpec(in) {
		name, _, _ = strings.Cut(name, "?")
	}
	switch {
	case strings.HasSuffix(name, ".jsonl.gz"), strings.HasSuffix(name, ".jsonl"), strings.HasSuffix(name, ".json"):
		return "jsonl", true
	case strings.HasSuffix(name, ".csv.gz"), strings.HasSuffix(name, ".csv"):
		return "csv", true
	}
	return "", false
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// gzipMembers is the JSON Lines of r compressed as Export writes them: a
// gzip member per n lines, so that Import, which holds a member's lines
// until its checksum is read, holds at most n. A last line without its
// end gets one (a file of JSON Lines need not end in a newline; the line
// is checked as any other). Close stops the compression.
func gzipMembers(r io.Reader, n int) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		members := 0
		var err error
		for err == nil {
			var zw *gzip.Writer
			for lines := 0; lines < n && err == nil; {
				var b []byte
				b, err = br.ReadBytes('\n')
				if len(b) == 0 {
					continue
				}
				if b[len(b)-1] != '\n' {
					b = append(b, '\n')
				}
				if zw == nil {
					zw, _ = gzip.NewWriterLevel(pw, gzip.BestSpeed)
				}
				if _, werr := zw.Write(b); werr != nil {
					pw.CloseWithError(werr)
					return
				}
				lines++
			}
			if zw == nil && members > 0 {
				break
			}
			if zw == nil {
				zw = gzip.NewWriter(pw) // an empty input: one empty member
			}
			if cerr := zw.Close(); cerr != nil {
				pw.CloseWithError(cerr)
				return
			}
			members++
		}
		if err == io.EOF {
			err = nil
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// redactURL is an --in without its query (a blob URL's SAS).
func redactURL(in string) string {
	if isBlobSpec(in) {
		in, _, _ = strings.Cut(in, "?")
	}
	return in
}
