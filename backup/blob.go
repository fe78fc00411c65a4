package backup

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// MetadataToken is the blob metadata key under which ExportBlob keeps the
// token its next run resumes from; it is committed with the blocks it
// describes, in one request.
const MetadataToken = "tablekitexport"

// ExportBlob is Export to a block blob, one block per segment, so at most
// 50,000 segments (a block blob's most blocks; the export then stops with
// ErrTooLarge before staging more). The resume token stays within the 8
// KiB of a blob's metadata for the longest keys
// (TestExportBlobTokenFitsTheMetadataLimit). Each
// checkpoint commits the blocks written so far together with the resume
// token, in the blob's metadata, in one request: a crashed ExportBlob is
// resumed by calling it again with the same options (opts.Resume must be
// empty), and a finished one called again writes nothing. To start over,
// delete the blob.
//
// Every commit is conditional on the blob being as the export left it
// (its ETag; for the first, that no blob exists), so that two exports to
// one blob, or anyone else's write to it while an export runs, cannot
// interleave: the export stops with an error matching ErrBlobChanged rather
// than commit over another writer. A commit whose reply was lost and whose
// resend meets its own applied commit is recognised by the token it left
// (TestExportBlobBesideAnotherWriter). An existing blob is resumed only
// when it holds exactly the bytes its token counts; one written by anyone
// else is refused with ErrInvalid.
//
// The blob's container is the caller's and must exist: ExportBlob creates
// the blob, not its container (account.ContainerProvisioner(c).Provision,
// or account.Provision with it, creates the container unless it exists).
func ExportBlob(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], dst *blockblob.Client, opts ExportOptions) (Summary, error) {
	if err := argerr.Ctx(ctx, ctxError); err != nil {
		return Summary{}, err
	}
	if dst == nil {
		return Summary{}, &ConfigError{Field: "blob", Reason: ReasonNil}
	}
	if opts.Resume != "" {
		return Summary{}, &ConfigError{Field: "ExportOptions.Resume", Reason: "ExportBlob keeps its own token in the blob: leave Resume empty"}
	}
	// Everything the caller gave is checked before the first request.
	opts, start, err := prepare(tbl, opts)
	if err != nil {
		return Summary{}, err
	}
	bw := &blockWriter{dst: dst}
	props, err := dst.GetProperties(ctx, nil)
	switch {
	case bloberror.HasCode(err, bloberror.BlobNotFound):
	case err != nil:
		return Summary{}, fmt.Errorf("backup: read the blob's resume token: %w", err)
	default:
		tok := tokenOf(props.Metadata)
		if tok == "" {
			return Summary{}, &ConfigError{Field: "blob", Reason: "exists and was not written by ExportBlob (no " + MetadataToken + " metadata): delete it or choose another"}
		}
		pos, err := parseToken(tok)
		if err != nil {
			return Summary{}, &ConfigError{Field: "blob", Reason: "its " + MetadataToken + " metadata is not a token of ExportBlob: delete it or choose another"}
		}
		if pos.Export != start.Export || pos.Ranges != start.Ranges {
			return Summary{}, &ConfigError{Field: "blob", Reason: fmt.Sprintf("holds an export of another table than %q, or with other Ranges, Filter or SegmentEntities: delete it or choose another", tbl.Name())}
		}
		if props.ContentLength == nil || *props.ContentLength != pos.Bytes {
			return Summary{}, &ConfigError{Field: "blob", Reason: fmt.Sprintf("holds %s bytes where its token counts %d: written by someone else since; delete it or choose another", sizeText(props.ContentLength), pos.Bytes)}
		}
		opts.Resume = tok
		bw.etag = props.ETag
		list, err := dst.GetBlockList(ctx, blockblob.BlockListTypeCommitted, nil)
		if err != nil {
			return Summary{}, fmt.Errorf("backup: read the blob's blocks: %w", err)
		}
		if list.ETag != nil && bw.etag != nil && *list.ETag != *bw.etag {
			return Summary{}, fmt.Errorf("backup: blob changed while its blocks were read: %w", ErrBlobChanged)
		}
		for _, b := range list.CommittedBlocks {
			bw.ids = append(bw.ids, *b.Name)
		}
	}
	user := opts.Checkpoint
	opts.Checkpoint = func(c Checkpoint) error {
		if err := bw.commit(ctx, c); err != nil {
			return err
		}
		if user != nil {
			return user(c)
		}
		return nil
	}
	return Export(ctx, tbl, bw, opts)
}

// tokenOf is the resume token in a blob's metadata, "" when there is none.
func tokenOf(md map[string]*string) string {
	for k, v := range md {
		// azblob hands metadata keys back in HTTP's canonical case.
		if strings.EqualFold(k, MetadataToken) && v != nil {
			return *v
		}
	}
	return ""
}

// blockWriter gathers one segment's bytes and stages them as a block.
type blockWriter struct {
	dst  *blockblob.Client
	ids  []string
	buf  bytes.Buffer
	etag *azcore.ETag // the blob as the last commit left it; nil: no blob yet
}

func (w *blockWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

// maxBlocks is the most committed blocks a block blob holds.
const maxBlocks = 50_000

func (w *blockWriter) commit(ctx context.Context, c Checkpoint) error {
	if w.buf.Len() > 0 && len(w.ids) >= maxBlocks {
		// The service would refuse the block list as invalid, which
		// reads like another writer's change.
		return fmt.Errorf("backup: the blob holds %d blocks, the most a block blob takes (one per segment): export with a larger SegmentEntities: %w", len(w.ids), ErrTooLarge)
	}
	id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "tablekit-segment-%010d", len(w.ids)))
	if w.buf.Len() > 0 {
		if _, err := w.dst.StageBlock(ctx, id, readSeekNopCloser(w.buf.Bytes()), nil); err != nil {
			return fmt.Errorf("backup: stage block %d: %w", len(w.ids), err)
		}
	}
	ids := w.ids
	if w.buf.Len() > 0 {
		ids = append(ids[:len(ids):len(ids)], id)
	}
	cond := &blob.ModifiedAccessConditions{}
	if w.etag == nil {
		cond.IfNoneMatch = to.Ptr(azcore.ETagAny)
	} else {
		cond.IfMatch = w.etag
	}
	resp, err := w.dst.CommitBlockList(ctx, ids, &blockblob.CommitBlockListOptions{
		Metadata:         map[string]*string{MetadataToken: &c.Token},
		HTTPHeaders:      &blob.HTTPHeaders{BlobContentType: to.Ptr("application/gzip")},
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: cond},
	})
	etag := resp.ETag
	if err != nil {
		var re *azcore.ResponseError
		refused := errors.As(err, &re) && (re.StatusCode == http.StatusPreconditionFailed || re.StatusCode == http.StatusConflict)
		if !refused && !bloberror.HasCode(err, bloberror.InvalidBlockList) {
			return fmt.Errorf("backup: commit blocks: %w", err)
		}
		// Refused on its condition, or its blocks are gone: the blob
		// changed since the last commit — by this very commit when its
		// first reply was lost and azcore sent it again, or by another
		// writer (who deleted or overwrote it, and our staged blocks).
		props, perr := w.dst.GetProperties(ctx, nil)
		if perr != nil || tokenOf(props.Metadata) != c.Token || props.ContentLength == nil || *props.ContentLength != c.Bytes {
			return fmt.Errorf("backup: commit blocks: %w", errors.Join(ErrBlobChanged, err, perr))
		}
		etag = props.ETag
	}
	w.etag = etag
	w.ids = ids
	w.buf.Reset()
	return nil
}

// sizeText is a blob's Content-Length, or "no" when it sent none.
func sizeText(n *int64) string {
	if n == nil {
		return "no"
	}
	return strconv.FormatInt(*n, 10)
}

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }

func readSeekNopCloser(b []byte) io.ReadSeekCloser { return nopCloser{bytes.NewReader(b)} }
