package backup

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"reflect"
	"time"

	"github.com/tablekit/tablekit/entity"
)

// Mode is how Import writes an entity whose keys are already stored.
type Mode int

const (
	// Upsert replaces the stored entity (InsertOrReplace): a repeated import
	// is harmless.
	Upsert Mode = iota
	// Insert writes only entities that are not stored; one stored with the
	// same properties counts as done, one that differs is a conflict,
	// reported and left as it is.
	Insert
)

// ImportOptions tunes Import and ImportCSV.
type ImportOptions struct {
	// Mode is Upsert (0) or Insert.
	Mode Mode
	// SegmentEntities is the most entities written between checkpoints; 0
	// means 1,000.
	SegmentEntities int
	// Concurrency is BulkWrite's partitions at once; 0 means its default.
	Concurrency int
	// ResumeAfter skips that many entities of the input: an
	// ImportCheckpoint's Entities from a run that did not finish.
	ResumeAfter int64
	// Checkpoint, if set, is called after each segment is written; an error
	// from it ends the import.
	Checkpoint func(ImportCheckpoint) error
	// Progress, if set, is called after each segment.
	Progress func(Progress)
}

// ImportCheckpoint is a point an import can resume from.
type ImportCheckpoint struct {
	Entities int64 // ImportOptions.ResumeAfter of the next run
}

// ImportSummary is what an import did.
type ImportSummary struct {
	Entities int64 // entities of the input handled (with ResumeAfter)
	Written  int64 // written by this run
	Existing int64 // Insert mode: already stored with the same properties
	// Conflicts are Insert mode's stored entities whose properties differ
	// from the input's: left as they are.
	Conflicts []EntityError
	// Failed are entities not written for another reason.
	Failed  []EntityError
	Elapsed time.Duration
}

// ImportError reports an import that finished with entities not written:
// ImportSummary's Failed and Conflicts name them.
type ImportError struct {
	Failed, Conflicts int
	First             error
}

func (e *ImportError) Error() string {
	if e == nil {
		return "backup: import: <nil>"
	}
	return fmt.Sprintf("backup: import: %d entities failed, %d in conflict; first: %v", e.Failed, e.Conflicts, e.First)
}

func (e *ImportError) Unwrap() error { return e.First }

func (o ImportOptions) withDefaults() (ImportOptions, error) {
	switch {
	case o.Mode != Upsert && o.Mode != Insert:
		return o, &ConfigError{Field: "ImportOptions.Mode", Reason: fmt.Sprintf("%d is neither Upsert nor Insert", o.Mode)}
	case o.SegmentEntities < 0:
		return o, &ConfigError{Field: "ImportOptions.SegmentEntities", Reason: fmt.Sprintf("%d is negative (0 means 1,000)", o.SegmentEntities)}
	case o.Concurrency < 0:
		return o, &ConfigError{Field: "ImportOptions.Concurrency", Reason: fmt.Sprintf("%d is negative", o.Concurrency)}
	case o.ResumeAfter < 0:
		return o, &ConfigError{Field: "ImportOptions.ResumeAfter", Reason: fmt.Sprintf("%d is negative", o.ResumeAfter)}
	}
	if o.SegmentEntities == 0 {
		o.SegmentEntities = 1000
	}
	return o, nil
}

// line is one entity of the input with its line number.
type line struct {
	n int
	d entity.DynamicEntity
}

// Import reads a backup made by Export from r and writes its entities to
// tbl (see the package doc for the guarantee).
func Import(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], r io.Reader, opts ImportOptions) (ImportSummary, error) {
	if tbl == nil || r == nil {
		return ImportSummary{}, &ConfigError{Field: "table or reader", Reason: "nil"}
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return ImportSummary{}, err
	}
	cr := &countingReader{r: r}
	gz, err := gzip.NewReader(cr)
	if err != nil {
		return ImportSummary{}, &LineError{Line: 1, Err: fmt.Errorf("not gzip: %w", err)}
	}
	defer gz.Close()
	return write(ctx, tbl, readLines(bufio.NewReaderSize(gz, 64<<10)), cr, opts)
}

// readLines yields the entities of a backup's lines after its header.
func readLines(br *bufio.Reader) iter.Seq2[line, error] {
	return func(yield func(line, error) bool) {
		for n := 1; ; n++ {
			b, err := br.ReadBytes('\n')
			if len(b) == 0 && err == io.EOF {
				if n == 1 {
					yield(line{}, &LineError{Line: 1, Err: errors.New("empty input: no header")})
				}
				return
			}
			if err != nil && err != io.EOF {
				yield(line{}, &LineError{Line: n, Err: err})
				return
			}
			if b[len(b)-1] != '\n' {
				yield(line{}, &LineError{Line: n, Err: errors.New("truncated: the last line has no end")})
				return
			}
			b = b[:len(b)-1]
			if n == 1 {
				if string(b) != header {
					yield(line{}, &LineError{Line: 1, Err: fmt.Errorf("header %.40q is not %s", b, header)})
					return
				}
				continue
			}
			var d entity.DynamicEntity
			if err := entity.Unmarshal(b, &d); err != nil {
				yield(line{}, &LineError{Line: n, Err: err})
				return
			}
			if !yield(line{n: n, d: d}, nil) {
				return
			}
		}
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// write imports the entities of lines in segments.
func write(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], lines iter.Seq2[line, error], cr *countingReader, opts ImportOptions) (ImportSummary, error) {
	start := time.Now()
	sum := ImportSummary{}
	var seg []line
	flush := func() error {
		if len(seg) == 0 {
			return nil
		}
		if err := writeSegment(ctx, tbl, seg, opts, &sum); err != nil {
			return err
		}
		sum.Entities += int64(len(seg))
		seg = seg[:0]
		if opts.Checkpoint != nil {
			if err := opts.Checkpoint(ImportCheckpoint{Entities: sum.Entities}); err != nil {
				return err
			}
		}
		if opts.Progress != nil {
			opts.Progress(progress(sum.Entities, cr.n, opts.ResumeAfter, start))
		}
		return nil
	}
	var skipped int64
	for l, err := range lines {
		if err != nil {
			sum.Elapsed = time.Since(start)
			return sum, err // nothing after an unreadable line is written
		}
		if skipped < opts.ResumeAfter {
			skipped++
			sum.Entities++
			continue
		}
		seg = append(seg, l)
		if len(seg) >= opts.SegmentEntities {
			if err := flush(); err != nil {
				sum.Elapsed = time.Since(start)
				return sum, err
			}
		}
	}
	err := flush()
	sum.Elapsed = time.Since(start)
	if err != nil {
		return sum, err
	}
	if len(sum.Failed)+len(sum.Conflicts) > 0 {
		ie := &ImportError{Failed: len(sum.Failed), Conflicts: len(sum.Conflicts)}
		if len(sum.Failed) > 0 {
			ie.First = &sum.Failed[0]
		} else {
			ie.First = &sum.Conflicts[0]
		}
		return sum, ie
	}
	return sum, nil
}

func writeSegment(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], seg []line, opts ImportOptions, sum *ImportSummary) error {
	ents := make([]entity.DynamicEntity, len(seg))
	for i := range seg {
		ents[i] = seg[i].d
	}
	mode := entity.OpUpsertReplace
	if opts.Mode == Insert {
		mode = entity.OpInsert
	}
	outs, err := tbl.BulkWrite(ctx, ents, entity.BulkOptions{Mode: mode, Concurrency: opts.Concurrency})
	if err != nil {
		var be *entity.BulkError
		if !errors.As(err, &be) || len(outs) != len(ents) {
			return fmt.Errorf("backup: write lines %d to %d: %w", seg[0].n, seg[len(seg)-1].n, err)
		}
	}
	for i, o := range outs {
		l := seg[i]
		switch {
		case o.Err == nil:
			sum.Written++
		case opts.Mode == Insert && errors.Is(o.Err, entity.ErrAlreadyExists):
			same, gerr := sameAsStored(ctx, tbl, &l.d)
			switch {
			case gerr != nil:
				sum.Failed = append(sum.Failed, EntityError{Line: l.n, PartitionKey: l.d.PartitionKey, RowKey: l.d.RowKey, Err: gerr})
			case same:
				sum.Existing++
			default:
				sum.Conflicts = append(sum.Conflicts, EntityError{Line: l.n, PartitionKey: l.d.PartitionKey, RowKey: l.d.RowKey,
					Err: fmt.Errorf("stored with other properties: %w", o.Err)})
			}
		default:
			sum.Failed = append(sum.Failed, EntityError{Line: l.n, PartitionKey: l.d.PartitionKey, RowKey: l.d.RowKey, Err: o.Err})
		}
	}
	return nil
}

// sameAsStored reports whether the stored entity with d's keys has exactly
// d's properties.
func sameAsStored(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], d *entity.DynamicEntity) (bool, error) {
	got, err := tbl.Get(ctx, d.PartitionKey, d.RowKey)
	if err != nil {
		return false, err
	}
	return maps.EqualFunc(got.Properties, d.Properties, reflect.DeepEqual), nil
}
