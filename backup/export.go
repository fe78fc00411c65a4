package backup

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/keys"
)

// header is the first line of every backup.
const header = `{"tablekit.backup":1}`

// Range is the PartitionKeys from From (inclusive) to To (exclusive); an
// empty To means no upper bound.
type Range struct{ From, To string }

// ExportOptions tunes Export. The zero value exports the whole table.
type ExportOptions struct {
	// Filter selects entities within each range; empty means all.
	Filter filter.Expr
	// Ranges are read in parallel and written in the order given; nil means
	// one range, the whole table. Ranges that overlap are refused; give
	// them in key order to get the table's order.
	Ranges []Range
	// Parallel is the most ranges read at once; 0 means 4.
	Parallel int
	// SegmentEntities is the most entities per gzip member, and so between
	// checkpoints; 0 means 1,000.
	SegmentEntities int
	// Resume is a Checkpoint's Token: the export goes on after it, and the
	// output must hold exactly the Checkpoint's Bytes. "" starts over. The
	// other options must be those of the run that made it.
	Resume string
	// Checkpoint, if set, is called after each segment is written to the
	// output; an error from it ends the export.
	Checkpoint func(Checkpoint) error
	// Progress, if set, is called after each segment.
	Progress func(Progress)
	// Decrypted exports an encrypted table (package crypt's Table.Entity)
	// in clear: every property the table decrypts is written to the backup
	// as plaintext. Without it such a table is refused before any request
	// (a *ConfigError matching entity.ErrInvalid): export the table through
	// a plain entity.Table of the same client instead, and the backup
	// holds the ciphertexts and their metadata as stored — it imports
	// (through a plain table) into a table of the same name, whose crypt
	// Table reads it with the keys that wrote it (see crypt's Rotate for
	// how long those must be kept).
	Decrypted bool
}

// Checkpoint is a point an export can resume from.
type Checkpoint struct {
	Token    string // ExportOptions.Resume of the next run
	Bytes    int64  // bytes of output written so far, by this run and those it resumed
	Entities int64  // entities written so far
}

// Progress is how far an export or import has come.
type Progress struct {
	Entities int64         // entities exported or imported so far (with resumed runs)
	Bytes    int64         // compressed bytes written or read so far
	Elapsed  time.Duration // since this run started
	Rate     float64       // entities per second in this run
}

func progress(entities, bytes, startEntities int64, start time.Time) Progress {
	p := Progress{Entities: entities, Bytes: bytes, Elapsed: time.Since(start)}
	if s := p.Elapsed.Seconds(); s > 0 {
		p.Rate = float64(entities-startEntities) / s
	}
	return p
}

// Summary is what an export did.
type Summary struct {
	Entities int64 // entities in the backup (with the runs this one resumed)
	Bytes    int64 // bytes of output (likewise)
	// Invalid are the entities of this run that the table holds but that
	// break a rule entity checks before every write (a DateTime before
	// 1601, a property name that is not a C# identifier: Azurite and Cosmos
	// DB store some), each with its line in the backup, its keys and the
	// rule. They are in the backup as stored; an import reports each of
	// them failed alone.
	Invalid []EntityError
	Elapsed time.Duration
}

func (o ExportOptions) withDefaults() (ExportOptions, error) {
	switch {
	case o.Parallel < 0:
		return o, &ConfigError{Field: "ExportOptions.Parallel", Reason: fmt.Sprintf("%d is negative (0 means 4)", o.Parallel)}
	case o.SegmentEntities < 0:
		return o, &ConfigError{Field: "ExportOptions.SegmentEntities", Reason: fmt.Sprintf("%d is negative (0 means 1,000)", o.SegmentEntities)}
	}
	if _, err := o.Filter.Build(); err != nil {
		return o, &ConfigError{Field: "ExportOptions.Filter", Reason: err.Error()}
	}
	if o.Parallel == 0 {
		o.Parallel = 4
	}
	if o.SegmentEntities == 0 {
		o.SegmentEntities = 1000
	}
	if len(o.Ranges) == 0 {
		o.Ranges = []Range{{}}
	}
	for i, r := range o.Ranges {
		// In the service's order of keys, which differs from Go's for
		// supplementary characters.
		if r.To != "" && keys.Compare(r.To, r.From) <= 0 {
			return o, &ConfigError{Field: fmt.Sprintf("ExportOptions.Ranges[%d]", i), Reason: fmt.Sprintf("To %q is not above From %q in the service's order of keys", r.To, r.From)}
		}
		for j, q := range o.Ranges[:i] {
			if below(r.From, q.To) && below(q.From, r.To) {
				return o, &ConfigError{Field: fmt.Sprintf("ExportOptions.Ranges[%d]", i), Reason: fmt.Sprintf("overlaps Ranges[%d]: the backup would hold their common entities twice", j)}
			}
		}
	}
	return o, nil
}

// below reports whether the PartitionKey from is below the range end to
// ("" has no end).
func below(from, to string) bool { return to == "" || keys.Compare(from, to) < 0 }

// prepare checks tbl and opts before any request is sent: it returns the
// options with their defaults, the position to start from (opts.Resume's,
// else the beginning) and the export's fingerprint, which every token it
// makes carries and a token it resumes must carry.
func prepare(tbl *entity.Table[entity.DynamicEntity], opts ExportOptions) (ExportOptions, position, error) {
	if tbl == nil {
		return opts, position{}, &ConfigError{Field: "table", Reason: ReasonNil}
	}
	if tbl.Protected() && !opts.Decrypted {
		return opts, position{}, errEncrypted("ExportOptions.Decrypted")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return opts, position{}, err
	}
	f, _ := opts.Filter.Build() // checked by withDefaults
	fp := fingerprint(tbl.Name(), opts, f)
	pos := position{Ranges: len(opts.Ranges), Export: fp}
	if opts.Resume == "" {
		return opts, pos, nil
	}
	if pos, err = parseToken(opts.Resume); err != nil {
		return opts, pos, err
	}
	if pos.Ranges != len(opts.Ranges) {
		return opts, pos, &ConfigError{Field: "ExportOptions.Resume", Reason: fmt.Sprintf("made by an export of %d ranges, not %d", pos.Ranges, len(opts.Ranges))}
	}
	if pos.Export != fp {
		return opts, pos, &ConfigError{Field: "ExportOptions.Resume", Reason: fmt.Sprintf("made by an export of another table than %q, or with other Ranges, Filter or SegmentEntities", tbl.Name())}
	}
	return opts, pos, nil
}

// Export writes the entities of tbl to w as a backup (see the package doc
// for the format and the guarantee).
func Export(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], w io.Writer, opts ExportOptions) (Summary, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return Summary{}, err
	}
	opts, pos, err := prepare(tbl, opts)
	if err != nil {
		return Summary{}, err
	}
	if w == nil {
		return Summary{}, &ConfigError{Field: "writer", Reason: ReasonNil}
	}
	return export(ctx, tbl, w, opts, pos)
}

// export runs from pos; w holds pos.Bytes bytes already.
func export(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], w io.Writer, opts ExportOptions, pos position) (Summary, error) {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rd := newReader(ctx, tbl, opts, pos)
	seg := segmenter{w: w, pos: pos, fresh: pos.Bytes == 0 && pos.Entities == 0, startEntities: pos.Entities}
	for {
		batch, more, err := rd.next()
		if err != nil {
			return seg.summary(start), err
		}
		for _, d := range batch.items {
			if err := seg.add(&d); err != nil {
				return seg.summary(start), err
			}
			seg.pos.Range, seg.pos.Started, seg.pos.PK, seg.pos.RK = batch.rng, true, d.PartitionKey, d.RowKey
			if seg.n >= opts.SegmentEntities {
				if err := seg.flush(opts, start); err != nil {
					return seg.summary(start), err
				}
			}
		}
		if batch.last {
			// The range is done: the position moves to the next one.
			seg.pos.Range, seg.pos.Started, seg.pos.PK, seg.pos.RK = batch.rng+1, false, "", ""
		}
		if !more {
			break
		}
	}
	if seg.n > 0 || seg.fresh {
		if err := seg.flush(opts, start); err != nil {
			return seg.summary(start), err
		}
	}
	return seg.summary(start), nil
}

// segmenter gathers lines into gzip members.
type segmenter struct {
	w     io.Writer
	pos   position // after the last entity added
	fresh bool     // nothing written yet: the header comes first
	buf   bytes.Buffer
	n     int // entities in buf

	startEntities int64 // entities written before this run
	invalid       []EntityError
}

func (s *segmenter) add(d *entity.DynamicEntity) error {
	d.ETag, d.Timestamp = "", time.Time{}
	line, err := entity.Marshal(d)
	if errors.Is(err, entity.ErrInvalid) {
		// Stored all the same: the backup keeps it as it is.
		n := s.pos.Entities + int64(s.n) + 2 // the header is line 1
		s.invalid = append(s.invalid, EntityError{Line: int(n), PartitionKey: d.PartitionKey, RowKey: d.RowKey, Err: err})
		line, err = entity.MarshalStored(d)
	}
	if err != nil {
		return fmt.Errorf("backup: encode %s: %w", entityKeys(d.PartitionKey, d.RowKey), err)
	}
	s.buf.Write(line)
	s.buf.WriteByte('\n')
	s.n++
	return nil
}

// flush writes the gathered lines as one gzip member and checkpoints.
func (s *segmenter) flush(opts ExportOptions, start time.Time) error {
	cw := &countingWriter{w: s.w}
	gz := gzip.NewWriter(cw)
	if s.fresh {
		if _, err := io.WriteString(gz, header+"\n"); err != nil {
			return fmt.Errorf("backup: write: %w", err)
		}
		s.fresh = false
	}
	if _, err := gz.Write(s.buf.Bytes()); err != nil {
		return fmt.Errorf("backup: write: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("backup: write: %w", err)
	}
	s.pos.Bytes += cw.n
	s.pos.Entities += int64(s.n)
	s.buf.Reset()
	s.n = 0
	if opts.Checkpoint != nil {
		if err := opts.Checkpoint(Checkpoint{Token: s.pos.token(), Bytes: s.pos.Bytes, Entities: s.pos.Entities}); err != nil {
			return err
		}
	}
	if opts.Progress != nil {
		opts.Progress(progress(s.pos.Entities, s.pos.Bytes, s.startEntities, start))
	}
	return nil
}

func (s *segmenter) summary(start time.Time) Summary {
	// Those not yet flushed are not in the output.
	var inv []EntityError
	for _, e := range s.invalid {
		if int64(e.Line) <= s.pos.Entities+1 {
			inv = append(inv, e)
		}
	}
	return Summary{Entities: s.pos.Entities, Bytes: s.pos.Bytes, Invalid: inv, Elapsed: time.Since(start)}
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// batch is some entities of one range; last marks the range's end.
type batch struct {
	rng   int
	items []entity.DynamicEntity
	last  bool
}

// reader reads the ranges from pos on, up to Parallel at a time, and hands
// their batches over in range order.
type reader struct {
	ctx  context.Context
	tbl  *entity.Table[entity.DynamicEntity]
	opts ExportOptions
	pos  position
	// resumable: the export makes checkpoints or resumes from one, so
	// the ranges' pages must come in key order (see read).
	resumable bool
	chans     map[int]chan result
	cursor    int // the range being handed over
	ahead     int // ranges started
}

type result struct {
	b   batch
	err error
}

func newReader(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], opts ExportOptions, pos position) *reader {
	r := &reader{ctx: ctx, tbl: tbl, opts: opts, pos: pos, resumable: opts.Checkpoint != nil || opts.Resume != "",
		chans: map[int]chan result{}, cursor: pos.Range, ahead: pos.Range}
	r.fill()
	return r
}

// fill starts ranges until Parallel are in flight.
func (r *reader) fill() {
	for r.ahead < len(r.opts.Ranges) && r.ahead-r.cursor < r.opts.Parallel {
		ch := make(chan result, 8)
		r.chans[r.ahead] = ch
		go r.read(r.ahead, ch)
		r.ahead++
	}
}

// next returns the next batch in order; more is false after the last one.
func (r *reader) next() (batch, bool, error) {
	if r.cursor >= len(r.opts.Ranges) {
		return batch{last: false, rng: r.cursor}, false, nil
	}
	if err := r.ctx.Err(); err != nil {
		// Not a batch read before: a cancelled export stops here.
		return batch{}, false, fmt.Errorf("backup: read range %d: %w", r.cursor, err)
	}
	ch := r.chans[r.cursor]
	var res result
	select {
	case res = <-ch:
	case <-r.ctx.Done():
		return batch{}, false, fmt.Errorf("backup: read range %d: %w", r.cursor, r.ctx.Err())
	}
	if res.err != nil {
		return batch{}, false, res.err
	}
	if res.b.last {
		delete(r.chans, r.cursor)
		r.cursor++
		r.fill()
	}
	return res.b, r.cursor < len(r.opts.Ranges) || !res.b.last, nil
}

// rangeFilter is range i's filter, after the resume position if it is in
// that range.
func (r *reader) rangeFilter(i int) filter.Expr {
	rg := r.opts.Ranges[i]
	var parts []filter.Expr
	if rg.From != "" {
		parts = append(parts, filter.Ge(filter.PartitionKeyProperty, filter.String(rg.From)))
	}
	if rg.To != "" {
		parts = append(parts, filter.Lt(filter.PartitionKeyProperty, filter.String(rg.To)))
	}
	if i == r.pos.Range && r.pos.Started {
		parts = append(parts, filter.Or(
			filter.And(filter.PK(r.pos.PK), filter.Gt(filter.RowKeyProperty, filter.String(r.pos.RK))),
			filter.Gt(filter.PartitionKeyProperty, filter.String(r.pos.PK)),
		))
	}
	if !r.opts.Filter.IsEmpty() {
		parts = append(parts, r.opts.Filter)
	}
	if len(parts) == 0 {
		return filter.Expr{}
	}
	return filter.And(parts...)
}

// read reads range i page by page, each page sorted into the service's
// key order before it is handed over, so that the output is in key order
// and "after the last key written" is where a resumed export goes on even
// where a page's rows come in another order (Cosmos DB). That holds while
// every page's keys are above the previous page's, as continuation tokens
// make them on Table storage and under package integration/cosmos's
// profile; a page that breaks it ends the range with an *OrderError
// (ErrUnordered) before any of its rows is written, when the export makes
// checkpoints or resumes (r.resumable). Without them the page is written
// as it comes: the backup is complete, its order the service's.
func (r *reader) read(i int, ch chan<- result) {
	send := func(res result) bool {
		select {
		case ch <- res:
			return true
		case <-r.ctx.Done():
			return false
		}
	}
	const per = 100
	q := entity.Query{Filter: r.rangeFilter(i)}
	var lastPK, lastRK string
	have := i == r.pos.Range && r.pos.Started
	if have {
		lastPK, lastRK = r.pos.PK, r.pos.RK
	}
	for token := ""; ; {
		page, err := r.tbl.QueryPage(r.ctx, q, token)
		if err != nil {
			send(result{err: fmt.Errorf("backup: read range %d: %w", i, err)})
			return
		}
		items := page.Items
		slices.SortFunc(items, func(a, b entity.DynamicEntity) int {
			return compareKeys(a.PartitionKey, a.RowKey, b.PartitionKey, b.RowKey)
		})
		if len(items) > 0 {
			first := items[0]
			if have && r.resumable && compareKeys(first.PartitionKey, first.RowKey, lastPK, lastRK) <= 0 {
				send(result{err: &OrderError{Range: i, PartitionKey: first.PartitionKey, RowKey: first.RowKey, AfterPartitionKey: lastPK, AfterRowKey: lastRK}})
				return
			}
			lastPK, lastRK, have = items[len(items)-1].PartitionKey, items[len(items)-1].RowKey, true
		}
		for len(items) > 0 {
			n := min(per, len(items))
			if !send(result{b: batch{rng: i, items: items[:n:n]}}) {
				return
			}
			items = items[n:]
		}
		if page.Next == "" {
			break
		}
		token = page.Next
	}
	send(result{b: batch{rng: i, last: true}})
}

// compareKeys orders two entities' keys as the service does: by
// PartitionKey, then RowKey, each in keys.Compare's order.
func compareKeys(pk1, rk1, pk2, rk2 string) int {
	if c := keys.Compare(pk1, pk2); c != 0 {
		return c
	}
	return keys.Compare(rk1, rk2)
}
