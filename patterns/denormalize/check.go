package denormalize

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/internal/scantoken"
	"github.com/tablekit/tablekit/patterns/drift"
)

// CheckOptions chooses what Check and Rebuild scan: the targets'
// partitions, or (nil Partitions) the whole targets' table; Checkpoint
// is called after each page of targets.
type CheckOptions = drift.CheckOptions

// tokenPrefix marks (and versions) the resume tokens of this package.
const tokenPrefix = "dn1."

// token is where a check resumes: a page of the targets' table, or of its
// Part'th listed partition.
type token struct {
	Part int    `json:"p,omitempty"`
	Page string `json:"t,omitempty"`
}

func (t token) String() string { return scantoken.Encode(tokenPrefix, t) }

// parseToken reads a resume token; "" is the start of a scan.
func parseToken(s string) (token, error) {
	var t token
	if s == "" {
		return t, nil
	}
	if !scantoken.Decode(tokenPrefix, s, &t) || t.Part < 0 {
		return token{}, ErrInvalidToken
	}
	return t, nil
}

// Check scans the targets and yields a drift.Finding for every copy that
// disagrees with its source, named from the copy's side: Missing (the
// source has values the target does not hold), Stale (the copy differs),
// Orphan (a copy kept for a source that is gone, or by a target that
// refers to none). Index is the relation's name, Primary the source,
// Entry the target. SamePartition copies never drift unless written
// without this package; OtherPartition copies are reported while their
// fan-out is under way. Each page of targets costs one query, plus one
// point query per distinct source its targets refer to. Outbox intents
// waiting in the targets' table (RowKeys that start with
// Config.Outbox.Prefix) are eventual's, not targets: they are skipped, as
// the writes skip them in the ranges Relation.Targets names
// (TestIntentsAreNotTargets).
//
// A target (or the source it refers to) that does not decode as its
// type yields a *StepError naming its keys, and the scan goes on past it
// unless the caller stops (TestBadTargetCheck); any other error ends the
// scan.
func (c *Copies[T, S]) Check(ctx context.Context, opts CheckOptions) iter.Seq2[drift.Finding, error] {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return func(yield func(drift.Finding, error) bool) { yield(drift.Finding{}, err) }
	}
	if err := c.ok(); err != nil {
		return func(yield func(drift.Finding, error) bool) { yield(drift.Finding{}, err) }
	}
	return c.check(ctx, opts, nil)
}

func (c *Copies[T, S]) check(ctx context.Context, opts CheckOptions, sum *drift.Summary) iter.Seq2[drift.Finding, error] {
	return func(yield func(drift.Finding, error) bool) {
		tok, err := parseToken(opts.Resume)
		if err == nil && opts.Partitions == nil && tok.Part != 0 || opts.Partitions != nil && tok.Part > len(opts.Partitions) {
			err = ErrInvalidToken
		}
		if err != nil {
			yield(drift.Finding{}, err)
			return
		}
		for {
			q := entity.Query{}
			if opts.Partitions != nil {
				if tok.Part == len(opts.Partitions) {
					return
				}
				q.Filter = filter.PK(opts.Partitions[tok.Part])
			}
			page, err := c.tgtRaw.QueryPage(ctx, q, tok.Page)
			if err != nil {
				yield(drift.Finding{}, &StepError{Step: "check: read targets", Err: err})
				return
			}
			here := tok.String()
			sources := map[Key]*doc[S]{}
			for _, raw := range page.Items {
				t, err := decode[T](ctx, c.tgtRaw, raw)
				if k, ok := badRow(err); ok && isIntent(k, c.intents) || err == nil && isIntent(t.key, c.intents) {
					continue // an outbox intent, waiting to be sent: not a target
				}
				if k, ok := badRow(err); ok {
					// One target that does not decode is reported, with its
					// keys, and the scan goes on past it.
					if !yield(drift.Finding{}, &StepError{Step: "check: read target", Key: k, Err: err}) {
						return
					}
					continue
				}
				if err != nil {
					yield(drift.Finding{}, &StepError{Step: "check: read target", Err: err})
					return
				}
				if sum != nil {
					sum.Scanned++
				}
				for _, f := range c.findings(ctx, t, sources) {
					if f.err != nil {
						if _, ok := badRow(f.err); ok {
							if !yield(drift.Finding{}, f.err) {
								return
							}
							continue
						}
						yield(drift.Finding{}, f.err)
						return
					}
					f.Resume = here
					if sum != nil {
						sum.Count(f.Finding)
					}
					if !yield(f.Finding, nil) {
						return
					}
				}
			}
			switch {
			case page.Next != "":
				tok.Page = page.Next
			case opts.Partitions != nil:
				tok = token{Part: tok.Part + 1}
			default:
				tok = token{Part: -1}
			}
			if tok.Part < 0 {
				if sum != nil {
					sum.Next = ""
				}
				return
			}
			if opts.Checkpoint != nil {
				opts.Checkpoint(tok.String())
			}
			if opts.Partitions != nil && tok.Part == len(opts.Partitions) {
				return
			}
		}
	}
}

type finding struct {
	drift.Finding
	err error
}

// findings compares target t with the sources it refers to, read once per
// page (sources).
func (c *Copies[T, S]) findings(ctx context.Context, t *doc[T], sources map[Key]*doc[S]) []finding {
	var out []finding
	for _, r := range c.rels {
		entry := drift.Key{PartitionKey: t.key.PartitionKey, RowKey: t.key.RowKey}
		if !c.same {
			entry.Table = c.targets.Name()
		}
		have := r.copyIn(&t.bag)
		k, ok := r.sourceOf(t)
		if !ok {
			if len(have) > 0 {
				out = append(out, finding{Finding: drift.Finding{Kind: drift.Orphan, Index: r.Name, Entry: entry, Detail: "a copy kept by a target that refers to no source"}})
			}
			continue
		}
		src, seen := sources[k]
		if !seen && validKey(k) != nil {
			// Another program made the target refer to a key no entity
			// can have: a source that does not exist, not an error that
			// ends the scan (TestCheckTargetReferringToAnImpossibleKey).
			seen = true
		}
		if !seen {
			var err error
			if src, err = read[S](ctx, c.srcRaw, k); err != nil {
				err = &StepError{Step: "check: read source", Relation: r.Name, Key: k, Err: err}
				if _, ok := badRow(err); ok {
					out = append(out, finding{err: err}) // this target's copy cannot be checked; the others can
					continue
				}
				return []finding{{err: err}}
			}
			sources[k] = src
		}
		primary := drift.Key{PartitionKey: k.PartitionKey, RowKey: k.RowKey}
		var sb *entity.DynamicEntity
		if src != nil {
			sb = &src.bag
		}
		want := r.project(sb)
		switch {
		case r.holds(&t.bag, want):
		case src == nil:
			out = append(out, finding{Finding: drift.Finding{Kind: drift.Orphan, Index: r.Name, Primary: primary, Entry: entry, Detail: "a copy of a source that is gone"}})
		case len(have) == 0:
			out = append(out, finding{Finding: drift.Finding{Kind: drift.Missing, Index: r.Name, Primary: primary, Entry: entry, Detail: "no copy of the source's properties"}})
		default:
			out = append(out, finding{Finding: drift.Finding{Kind: drift.Stale, Index: r.Name, Primary: primary, Entry: entry, Detail: "the copy differs from the source"}})
		}
	}
	return out
}

// Repair fixes the target of a finding as things are now: it copies again
// what the target's sources hold (Refresh). It is idempotent and safe
// while writers write; a target that is gone needs no repair.
func (c *Copies[T, S]) Repair(ctx context.Context, f drift.Finding) error {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return err
	}
	if err := c.ok(); err != nil {
		return err
	}
	_, err := c.Refresh(ctx, f.Entry.PartitionKey, f.Entry.RowKey)
	if errors.Is(err, entity.ErrNotFound) && !errors.Is(err, entity.ErrOutcomeUnknown) {
		return nil
	}
	return err
}

// Rebuild checks and repairs as it goes; the Summary counts what it found
// and repaired, and its Next resumes a rebuild that stopped on an error
// ("" once complete). A target that cannot be checked or repaired because
// it, or its source, does not decode fails alone: the rebuild goes on, and
// its error names those targets (at most 10) once the scan is complete,
// with Next "".
func (c *Copies[T, S]) Rebuild(ctx context.Context, opts CheckOptions) (drift.Summary, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return drift.Summary{}, err
	}
	if err := c.ok(); err != nil {
		return drift.Summary{}, err
	}
	var sum drift.Summary
	last := opts.Resume
	user := opts.Checkpoint
	opts.Checkpoint = func(t string) {
		last = t
		if user != nil {
			user(t)
		}
	}
	var bad []error
	more := 0
	badOne := func(err error) {
		if len(bad) < maxNamed {
			bad = append(bad, err)
		} else {
			more++
		}
	}
	for f, err := range c.check(ctx, opts, &sum) {
		if _, ok := badRow(err); ok {
			badOne(err)
			continue
		}
		if err != nil {
			sum.Next = last
			return sum, err
		}
		if err := c.Repair(ctx, f); err != nil {
			if _, ok := badRow(err); ok {
				badOne(err)
				continue
			}
			sum.Next = f.Resume
			return sum, err
		}
		sum.Repaired++
	}
	if more > 0 {
		bad = append(bad, fmt.Errorf("denormalize: and %d more", more))
	}
	return sum, errline.Join(bad...)
}
