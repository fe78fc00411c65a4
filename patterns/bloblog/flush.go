package bloblog

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/internal/errline"
)

// active is the blob a Logger appends a period's records to.
type active struct {
	name   string
	client *appendblob.Client
	size   int64 // bytes written, the next block's append position
	blocks int
	meta   blobMeta
	// etag is the blob's ETag as this Logger last wrote or read it: its
	// metadata is set and its blocks appended on condition of it, so that
	// nothing is written over a blob someone else changed or replaced
	// since — one of the same name and length included.
	etag azcore.ETag
	// left: someone else wrote to the blob; nothing more is appended to it.
	left bool
	// unsure is a block whose append had no answer: it may or may not be in
	// the blob. It is sent again, at the same position, before anything
	// else of the period, so that it ends up in the blob exactly once.
	unsure *block
}

// block is one append: whole records, at most MaxBlockBytes.
type block struct {
	data   []byte
	n      int
	lo, hi time.Time // the earliest and latest record time
}

// cutBlock takes the longest run of whole records at the start of data
// that fits in max bytes.
func cutBlock(data []byte, max int) block {
	b := block{}
	end, _ := scanRecords(data[:min(len(data), max)], func(t time.Time, _ int) {
		if b.n == 0 || t.Before(b.lo) {
			b.lo = t
		}
		if b.n == 0 || t.After(b.hi) {
			b.hi = t
		}
		b.n++
	})
	b.data = data[:end]
	return b
}

// flush writes every pending record, period by period, a block at a time.
// On failure the records not written go back to the front of the buffer.
func (l *Logger) flush(ctx context.Context) error {
	l.mu.Lock()
	take, oldest := l.pending, l.oldest
	l.pending, l.oldest, l.pendingBytes = map[int64]*chunk{}, time.Time{}, 0
	l.mu.Unlock()

	// Unsure blocks first: their records precede everything pending.
	for _, p := range periods(l.blobs) {
		if b := l.blobs[p]; b != nil && b.unsure != nil {
			if leftover, err := l.resend(ctx, p, b); err != nil {
				l.giveBack(take, oldest, err)
				if leftover != nil {
					l.giveBack(map[int64]*chunk{p: {data: leftover.data, n: leftover.n}}, time.Time{}, err)
				}
				return err
			}
		}
	}
	ps := periods(take)
	for i, p := range ps {
		c := take[p]
		for len(c.data) > 0 {
			blk := cutBlock(c.data, l.cfg.MaxBlockBytes)
			if err := l.appendBlock(ctx, p, blk); err != nil {
				if b := l.blobs[p]; b != nil && b.unsure != nil {
					// The block stays with its blob, to be sent again as is.
					c.data, c.n = c.data[len(blk.data):], c.n-blk.n
				}
				rest := map[int64]*chunk{}
				for _, q := range ps[i:] {
					rest[q] = take[q]
				}
				l.giveBack(rest, oldest, err)
				return err
			}
			c.data, c.n = c.data[len(blk.data):], c.n-blk.n
			l.written(blk)
		}
	}
	l.evict()
	return nil
}

// written accounts for a block that is in its blob.
func (l *Logger) written(blk block) {
	l.mu.Lock()
	l.bytes -= len(blk.data)
	l.records -= blk.n
	l.failing = nil
	l.space.Broadcast()
	l.mu.Unlock()
}

// giveBack puts records that were not written back at the front of the
// buffer, ahead of those appended since, and records the failure.
func (l *Logger) giveBack(rest map[int64]*chunk, oldest time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, c := range rest {
		if len(c.data) == 0 {
			continue
		}
		l.pendingBytes += len(c.data)
		if cur := l.pending[p]; cur != nil {
			c = &chunk{data: append(c.data[:len(c.data):len(c.data)], cur.data...), n: c.n + cur.n}
		}
		l.pending[p] = c
	}
	if l.oldest.IsZero() || (!oldest.IsZero() && oldest.Before(l.oldest)) {
		if oldest.IsZero() {
			oldest = time.Now()
		}
		l.oldest = oldest
	}
	l.failing = err
	l.space.Broadcast()
}

// evict forgets the blobs of old periods, keeping the newest few: a late
// record of a forgotten period finds the period's last blob by listing.
func (l *Logger) evict() {
	const keep = 4
	ps := periods(l.seqs)
	for _, p := range ps[:max(0, len(ps)-keep)] {
		if b := l.blobs[p]; b == nil || b.unsure == nil {
			delete(l.blobs, p)
			delete(l.seqs, p)
		}
	}
}

// appendBlock appends blk to the period's blob, rolling to a new blob
// first when blk would cross a limit. The blob's metadata is widened to
// blk's time range before the append, so that a reader never skips a blob
// that holds a record in its range, whatever fails in between.
func (l *Logger) appendBlock(ctx context.Context, p int64, blk block) error {
	for attempt := 0; ; attempt++ {
		b := l.blobs[p]
		if !l.fits(b, blk) {
			nb, err := l.roll(ctx, p, blk)
			if err != nil {
				return err
			}
			l.blobs[p], b = nb, nb
		}
		if !b.meta.covers(blk.lo, blk.hi) {
			m := b.meta.widen(blk.lo, blk.hi)
			resp, err := b.client.SetMetadata(ctx, m.encode(), &blob.SetMetadataOptions{
				AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &b.etag}}})
			if gone(err) || changed(err) {
				// Deleted, or changed or replaced, by someone else (or a
				// resend of a change whose reply was lost: the blob is
				// left all the same): the next round starts a new blob.
				// Setting this Logger's range and id over another
				// writer's blob would hide its records from readers.
				b.left = true
				delete(l.blobs, p)
				continue
			} else if err != nil {
				return &BlobError{Op: "set metadata of", Blob: b.name, Err: err}
			}
			b.meta, b.etag = m, deref(resp.ETag)
		}
		done, err := l.tryAppend(ctx, b, blk)
		if done || err != nil {
			return err
		}
		// The blob cannot take the block (another writer's, or a limit
		// lower than configured): the next round starts a new blob.
		if attempt == 2 {
			return &BlobError{Op: "append to", Blob: b.name, Err: errors.New("the blob refuses blocks at its expected position")}
		}
		delete(l.blobs, p)
	}
}

// fits reports whether blk can go to b without crossing a limit.
func (l *Logger) fits(b *active, blk block) bool {
	return b != nil && !b.left && b.blocks+1 <= l.cfg.MaxBlocks && b.size+int64(len(blk.data)) <= l.cfg.MaxBlobBytes
}

// tryAppend appends blk at b's expected position. done reports that blk is
// in the blob; false with a nil error means the blob cannot take it. When
// the outcome cannot be known, blk becomes b's unsure block and the error
// is returned.
func (l *Logger) tryAppend(ctx context.Context, b *active, blk block) (done bool, err error) {
	pos, maxSize := b.size, l.cfg.MaxBlobBytes
	ar, err := b.client.AppendBlock(ctx, streaming.NopCloser(bytes.NewReader(blk.data)), &appendblob.AppendBlockOptions{
		AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: &pos, MaxSize: &maxSize},
		AccessConditions:               &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: &b.etag}},
	})
	if err == nil {
		b.etag = deref(ar.ETag)
		b.size += int64(len(blk.data))
		b.blocks++
		b.unsure = nil
		return true, nil
	}
	var re *azcore.ResponseError
	refused := errors.As(err, &re)
	if gone(err) {
		// The blob was deleted, or replaced by one that is not an append
		// blob, by someone else: whatever it held is not there, this block
		// included. It goes to a new blob.
		b.unsure = nil
		return false, nil
	}
	if refused && !changed(err) && !bloberror.HasCode(err, bloberror.AppendPositionConditionNotMet, bloberror.MaxBlobSizeConditionNotMet, bloberror.BlockCountExceedsLimit) {
		// The service answered no: nothing was appended.
		return false, &BlobError{Op: "append to", Blob: b.name, Err: err}
	}
	// Either no answer, or a refusal that a lost first try would also
	// cause (azcore retried an append that was applied): the blob's length
	// tells which. Only this Logger appends to its blobs — unless someone
	// else wrote to it, which the length and the bytes at the block's
	// position tell.
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	props, perr := b.client.GetProperties(vctx, nil)
	if gone(perr) {
		b.unsure = nil
		return false, nil
	}
	if perr != nil {
		b.unsure = &block{data: bytes.Clone(blk.data), n: blk.n, lo: blk.lo, hi: blk.hi}
		return false, &BlobError{Op: "append to", Blob: b.name, Err: errline.Join(err, perr)}
	}
	size, blocks := deref(props.ContentLength), int(deref(props.BlobCommittedBlockCount))
	switch {
	case size == b.size+int64(len(blk.data)) && blocks == b.blocks+1:
		b.size, b.blocks, b.unsure, b.etag = size, blocks, nil, deref(props.ETag)
		return true, nil
	case size == b.size && blocks == b.blocks:
		b.unsure = nil
		if changed(err) {
			// Not appended, and the blob changed all the same: someone
			// else's change. Leave it.
			b.left = true
			return false, nil
		}
		if refused {
			return false, nil // a limit: roll
		}
		return false, &BlobError{Op: "append to", Blob: b.name, Err: err}
	}
	// The blob changed under us: someone else wrote to it. This Logger
	// leaves it; whether the block is in it is told by the bytes at its
	// position.
	b.unsure, b.left = nil, true
	if size < b.size+int64(len(blk.data)) {
		return false, nil
	}
	resp, derr := b.client.DownloadStream(vctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: b.size, Count: int64(len(blk.data))}})
	if gone(derr) {
		return false, nil
	}
	if derr != nil {
		b.unsure = &block{data: bytes.Clone(blk.data), n: blk.n, lo: blk.lo, hi: blk.hi}
		b.left = false
		return false, &BlobError{Op: "append to", Blob: b.name, Err: errline.Join(err, derr)}
	}
	at, rerr := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if rerr != nil {
		b.unsure = &block{data: bytes.Clone(blk.data), n: blk.n, lo: blk.lo, hi: blk.hi}
		b.left = false
		return false, &BlobError{Op: "append to", Blob: b.name, Err: errline.Join(err, rerr)}
	}
	return bytes.Equal(at, blk.data), nil
}

// changed reports a write refused on its ETag condition: the blob is not
// the version this Logger last wrote or read.
func changed(err error) bool {
	return bloberror.HasCode(err, bloberror.ConditionNotMet) || isStatus(err, http.StatusPreconditionFailed)
}

// gone reports an error saying that a blob is no longer this Logger's
// append blob: deleted, or replaced by a blob of another type.
func gone(err error) bool {
	return err != nil && (bloberror.HasCode(err, bloberror.BlobNotFound, bloberror.InvalidBlobType) || isStatus(err, http.StatusNotFound))
}

// resend settles b's unsure block: appended again at the same position, it
// lands once; if the first try had landed, the position no longer matches
// and the blob's length says so. On failure, leftover is the block when no
// blob holds it as unsure any more: it goes back to the buffer.
func (l *Logger) resend(ctx context.Context, p int64, b *active) (leftover *block, err error) {
	blk := *b.unsure
	done, err := l.tryAppend(ctx, b, blk)
	if err == nil && !done {
		// The blob cannot take it (it was not appended): write it where
		// the period's records go next.
		delete(l.blobs, p)
		err = l.appendBlock(ctx, p, blk)
		done = err == nil
	}
	if done {
		l.written(blk)
		return nil, nil
	}
	if nb := l.blobs[p]; nb != nil && nb.unsure != nil {
		return nil, err
	}
	return &blk, err
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

var anyETag = azcore.ETagAny

// roll creates the period's next blob, with the time range of blk, its
// first block, in its metadata.
func (l *Logger) roll(ctx context.Context, p int64, blk block) (*active, error) {
	start := time.Unix(p, 0).UTC()
	seq, ok := l.seqs[p]
	if !ok {
		last, mine, err := l.lastBlob(ctx, start)
		if err != nil {
			return nil, err
		}
		if mine {
			// This Logger created it and lost the reply, or forgot it: use it
			// if blk fits.
			b, err := l.open(ctx, blobName(l.cfg.Service, start, last))
			if err != nil {
				return nil, err
			}
			if l.fits(b, blk) {
				l.seqs[p] = last
				return b, nil
			}
		}
		seq = last
	}
	meta := blobMeta{format: FormatVersion, writer: l.writer}.widen(blk.lo, blk.hi)
	// l.seqs only moves past a name known to be taken: after a create
	// without an answer, the next roll tries the same name again.
	for tries := 0; tries < 100; tries++ {
		next := seq + 1
		if next > maxSeq {
			return nil, &BlobError{Op: "create", Blob: periodDir(l.cfg.Service, start), Err: errors.New("the period has 999,999 blobs")}
		}
		name := blobName(l.cfg.Service, start, next)
		client := l.c.NewAppendBlobClient(name)
		resp, err := client.Create(ctx, &appendblob.CreateOptions{
			Metadata:         meta.encode(),
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &anyETag}},
		})
		if err == nil {
			l.seqs[p] = next
			return &active{name: name, client: client, meta: meta, etag: deref(resp.ETag)}, nil
		}
		if !bloberror.HasCode(err, bloberror.BlobAlreadyExists) && !isStatus(err, http.StatusConflict, http.StatusPreconditionFailed) {
			return nil, &BlobError{Op: "create", Blob: name, Err: err}
		}
		// Taken: by another Logger, or by this one when the reply to its
		// create was lost and azcore's retry found the blob.
		b, oerr := l.open(ctx, name)
		if oerr != nil {
			return nil, oerr
		}
		seq, l.seqs[p] = next, next
		if b != nil {
			return b, nil
		}
	}
	return nil, &BlobError{Op: "create", Blob: periodDir(l.cfg.Service, start), Err: errors.New("100 names in a row taken")}
}

// lastBlob lists the period's folder for its highest sequence number, and
// whether that blob was created by this Logger.
func (l *Logger) lastBlob(ctx context.Context, start time.Time) (seq int, mine bool, err error) {
	prefix := periodDir(l.cfg.Service, start)
	pager := l.c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix, Include: container.ListBlobsInclude{Metadata: true}})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return 0, false, &BlobError{Op: "list", Blob: prefix, Err: err}
		}
		for _, it := range page.Segment.BlobItems {
			if _, n, ok := parseName(l.cfg.Service, deref(it.Name)); ok && n > seq {
				seq, mine = n, parseMeta(it.Metadata).writer == l.writer
			}
		}
	}
	return seq, mine, nil
}

// open returns this Logger's blob name as it is now; nil if it is not an
// append blob of this Logger.
func (l *Logger) open(ctx context.Context, name string) (*active, error) {
	client := l.c.NewAppendBlobClient(name)
	props, err := client.GetProperties(ctx, nil)
	if err != nil {
		return nil, &BlobError{Op: "open", Blob: name, Err: err}
	}
	m := parseMeta(props.Metadata)
	if m.writer != l.writer {
		return nil, nil
	}
	return &active{name: name, client: client, size: deref(props.ContentLength), blocks: int(deref(props.BlobCommittedBlockCount)), meta: m, etag: deref(props.ETag)}, nil
}

func isStatus(err error, codes ...int) bool {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return false
	}
	for _, c := range codes {
		if re.StatusCode == c {
			return true
		}
	}
	return false
}
