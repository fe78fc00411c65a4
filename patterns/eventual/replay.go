package eventual

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/internal/argerr"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/internal/errline"
	"github.com/tablekit/tablekit/patterns/eventual/internal/queueproc"
)

// ReplayOptions chooses what Replay moves back.
type ReplayOptions struct {
	// Max is the most messages to move; 0 means all. A negative Max is a
	// *ConfigError.
	Max int
	// Filter, if set, chooses the messages to move by their record; the
	// others stay in the poison queue. A message whose record is not kept
	// (see ErrNoPoisonRecord) is passed a record with only Queue and
	// PoisonMessageID set.
	Filter func(PoisonRecord) bool
	// Stale sends back also messages created Config.MarkerTTL ago or
	// more, whose Once markers may have been swept: Once may then apply
	// their changes again. Without it they stay in the poison queue and
	// Replay reports each with an error matching ErrStaleReplay.
	Stale bool
}

// Replay moves poison messages back into their work queues, as they were
// before they were poisoned — the text byte for byte (PoisonOriginal), or
// unwrapped (PoisonWrapped, also messages poisoned by earlier releases) —
// to run again once the cause is fixed: a handler deployed for an unknown
// kind, a bug fixed. Their dequeue count starts again at zero, and their
// record blobs are deleted. It returns how many it moved.
//
// Each message is enqueued into its work queue first, deleted from the
// poison queue second, and its record blob third; a crash after the first
// leaves it in both queues, and it runs again later from the poison
// queue's copy too (handlers are idempotent); a crash after the second,
// or a record delete that failed (reported to Hooks.Error), leaves a
// record naming a message no longer in the poison queue. A message created
// Config.MarkerTTL ago or more stays, reported as ErrStaleReplay, unless
// ReplayOptions.Stale (TestReplayKeepsAMessageOlderThanItsMarkers). One
// message that fails does not stop the
// others: Replay goes on and returns the failures joined. The poison
// messages Replay has received stay invisible for Config.VisibilityTimeout
// while it works (those the filter leaves are made visible again when it
// returns): after a crash, for that long.
//
// When ctx ends Replay stops before its next message and returns an error
// matching ctx.Err(): a message it had already enqueued is still deleted
// from the poison queue (those requests are not cancelled; 30 s at most),
// a receive in flight is waited for (not cancelled either: the service
// may have hidden its messages already; 30 s at most), and every poison
// message it had received and not moved is made visible again at once
// (TestReplayCancelledReleasesWhatItHeld,
// TestReplayCancelledMidReceiveReleasesTheBatch).
//
// An inline processor (NewInline) has no poison queue: Replay returns an
// *InlineError.
func (p *Processor) Replay(ctx context.Context, opts ReplayOptions) (int, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return 0, err
	}
	if err := p.usable(); err != nil {
		return 0, err
	}
	if p.inline {
		return 0, &InlineError{Op: "Replay"}
	}
	if opts.Max < 0 {
		return 0, &ConfigError{Field: "ReplayOptions.Max", Reason: fmt.Sprintf("is %d", opts.Max)}
	}
	moved := 0
	var errs []error
	for i, q := range p.queues {
		limit := -1
		if opts.Max > 0 {
			limit = opts.Max - moved
			if limit <= 0 {
				break
			}
		}
		n, err := p.replayQueue(ctx, q, p.names[i], limit, opts.Filter, opts.Stale)
		moved += n
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return moved, errline.Join(errs...)
}

type skipped struct{ id, receipt, text string }

func (p *Processor) replayQueue(ctx context.Context, q Queue, name string, limit int, keep func(PoisonRecord) bool, stale bool) (moved int, err error) {
	var held []skipped
	var errs []error
	defer func() {
		// Let the messages the filter left be seen again at once, also
		// when ctx ended (as Run releases what it holds at shutdown).
		if len(held) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		defer cancel()
		for _, s := range held {
			if _, uerr := q.Poison.UpdateMessage(ctx, s.id, s.receipt, s.text, &azqueue.UpdateMessageOptions{VisibilityTimeout: to.Ptr(int32(0))}); uerr != nil && !queueproc.IsGone(uerr) {
				p.onError(fmt.Errorf("eventual: replay: releasing poison message %s of %s: %w", s.id, name, uerr))
			}
		}
	}()
	for limit != 0 {
		n := int32(queueproc.MaxBatch)
		if limit > 0 && limit < queueproc.MaxBatch {
			n = int32(limit)
		}
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("eventual: replay: %s%s: %w", name, PoisonSuffix, err))
			return moved, errline.Join(errs...)
		}
		// The receive is not cancelled with ctx (finishTimeout after it at
		// most): once the service has executed it, its messages are hidden,
		// and only its reply lets them be released (below, as ctx ended).
		rctx, cancel := queueproc.Outlive(ctx, p.cfg.Clock, finishTimeout)
		resp, err := q.Poison.DequeueMessages(rctx, &azqueue.DequeueMessagesOptions{
			NumberOfMessages:  to.Ptr(n),
			VisibilityTimeout: to.Ptr(queueproc.Seconds(p.cfg.VisibilityTimeout)),
		})
		cancel()
		if queueproc.IsQueueNotFound(err) {
			return moved, errline.Join(errs...) // nothing was ever poisoned
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("eventual: replay: receiving from %s%s: %w", name, PoisonSuffix, err))
			return moved, errline.Join(errs...)
		}
		if len(resp.Messages) == 0 {
			return moved, errline.Join(errs...)
		}
		for _, dm := range resp.Messages {
			if dm == nil || dm.MessageID == nil || dm.PopReceipt == nil || dm.MessageText == nil {
				continue
			}
			if ctx.Err() != nil {
				// Stop: this one and the rest of the batch are released.
				held = append(held, skipped{*dm.MessageID, *dm.PopReceipt, *dm.MessageText})
				continue
			}
			rec, original, wrapped := ParsePoison(*dm.MessageText)
			if !wrapped && keep != nil {
				rec = p.recordFor(ctx, name, *dm.MessageID)
			}
			if keep != nil && !keep(rec) {
				held = append(held, skipped{*dm.MessageID, *dm.PopReceipt, *dm.MessageText})
				continue
			}
			if limit == 0 {
				held = append(held, skipped{*dm.MessageID, *dm.PopReceipt, *dm.MessageText})
				continue
			}
			if env, derr := decodeEnvelope(original); !stale && derr == nil && !env.Created.Time.IsZero() && !p.cfg.Now().Before(env.Created.Time.Add(p.cfg.MarkerTTL)) {
				// Markers are written after the message was created: before
				// Created + MarkerTTL none of them has expired.
				held = append(held, skipped{*dm.MessageID, *dm.PopReceipt, *dm.MessageText})
				errs = append(errs, fmt.Errorf("eventual: replay: poison message %s of %s (kind %q, id %q) was created %s, Config.MarkerTTL (%v) or more ago; it stays (ReplayOptions.Stale sends it): %w",
					*dm.MessageID, name, env.Kind, env.ID, env.Created.Time.UTC().Format(time.RFC3339), p.cfg.MarkerTTL, ErrStaleReplay))
				continue
			}
			if _, err := q.Work.EnqueueMessage(ctx, original, nil); err != nil {
				// This one stays; the others go on.
				held = append(held, skipped{*dm.MessageID, *dm.PopReceipt, *dm.MessageText})
				errs = append(errs, fmt.Errorf("eventual: replay: enqueueing poison message %s of %s into its queue: %w", *dm.MessageID, name, err))
				continue
			}
			// Enqueued: the delete and the record's delete finish even when
			// ctx ends now, so that a cancel leaves no second copy.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
			err := p.finishReplay(fctx, q, name, dm.MessageID, dm.PopReceipt, wrapped)
			cancel()
			if err != nil {
				errs = append(errs, err)
			}
			moved++
			if limit > 0 {
				limit--
			}
		}
		if ctx.Err() != nil {
			errs = append(errs, fmt.Errorf("eventual: replay: %s%s: %w", name, PoisonSuffix, ctx.Err()))
			return moved, errline.Join(errs...)
		}
	}
	return moved, errline.Join(errs...)
}

// finishTimeout bounds the requests that finish a message Replay has
// already enqueued, or release one it held, after its context ended.
const finishTimeout = 30 * time.Second

// finishReplay deletes a replayed message from the poison queue, then its
// record.
func (p *Processor) finishReplay(ctx context.Context, q Queue, name string, id, receipt *string, wrapped bool) error {
	if _, err := q.Poison.DeleteMessage(ctx, *id, *receipt, nil); err != nil && !queueproc.IsGone(err) {
		// Its record stays with it.
		return fmt.Errorf("eventual: replay: poison message %s of %s replayed, deleting it failed (a later Replay sends it again): %w", *id, name, err)
	}
	// The record goes last: a crash before leaves a record of a message no
	// longer in the poison queue, never a poison message whose record is
	// gone (which a filter would then leave there).
	if !wrapped && p.blobs != nil {
		if err := DeleteBlob(ctx, p.blobs, poisonRecordName(name+PoisonSuffix, *id)); err != nil {
			p.onError(fmt.Errorf("eventual: replay: deleting the record of poison message %s of %s: %w", *id, name, err))
		}
	}
	return nil
}

// recordFor returns the record of a PoisonOriginal message for Replay's
// filter: read from its blob, or, when it is not kept, only where the
// message is.
func (p *Processor) recordFor(ctx context.Context, queue, messageID string) PoisonRecord {
	rec, err := p.PoisonRecord(ctx, queue, messageID)
	if err != nil {
		if !errors.Is(err, ErrNoPoisonRecord) {
			p.onError(fmt.Errorf("eventual: replay: reading the record of poison message %s of %s: %w", messageID, queue, err))
		}
		return PoisonRecord{Queue: queue, PoisonMessageID: messageID}
	}
	return rec
}
