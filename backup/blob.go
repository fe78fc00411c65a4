package backup

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/tablekit/tablekit/entity"
)

// MetadataToken is the blob metadata key under which ExportBlob keeps the
// token its next run resumes from; it is committed with the blocks it
// describes, in one request.
const MetadataToken = "tablekitexport"

// ExportBlob is Export to a block blob, one block per segment. Each
// checkpoint commits the blocks written so far together with the resume
// token, in the blob's metadata, in one request: a crashed ExportBlob is
// resumed by calling it again with the same options (opts.Resume must be
// empty), and a finished one called again writes nothing. To start over,
// delete the blob.
func ExportBlob(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], dst *blockblob.Client, opts ExportOptions) (Summary, error) {
	if dst == nil {
		return Summary{}, &ConfigError{Field: "blob", Reason: "nil"}
	}
	if opts.Resume != "" {
		return Summary{}, &ConfigError{Field: "ExportOptions.Resume", Reason: "ExportBlob keeps its own token in the blob: leave Resume empty"}
	}
	bw := &blockWriter{dst: dst}
	props, err := dst.GetProperties(ctx, nil)
	switch {
	case bloberror.HasCode(err, bloberror.BlobNotFound):
	case err != nil:
		return Summary{}, fmt.Errorf("backup: read the blob's resume token: %w", err)
	default:
		var tok *string
		for k, v := range props.Metadata {
			// azblob hands metadata keys back in HTTP's canonical case.
			if strings.EqualFold(k, MetadataToken) {
				tok = v
			}
		}
		if tok == nil {
			return Summary{}, &ConfigError{Field: "blob", Reason: "exists and was not written by ExportBlob (no " + MetadataToken + " metadata): delete it or choose another"}
		}
		opts.Resume = *tok
		list, err := dst.GetBlockList(ctx, blockblob.BlockListTypeCommitted, nil)
		if err != nil {
			return Summary{}, fmt.Errorf("backup: read the blob's blocks: %w", err)
		}
		for _, b := range list.CommittedBlocks {
			bw.ids = append(bw.ids, *b.Name)
		}
	}
	user := opts.Checkpoint
	opts.Checkpoint = func(c Checkpoint) error {
		if err := bw.commit(ctx, c.Token); err != nil {
			return err
		}
		if user != nil {
			return user(c)
		}
		return nil
	}
	return Export(ctx, tbl, bw, opts)
}

// blockWriter gathers one segment's bytes and stages them as a block.
type blockWriter struct {
	dst *blockblob.Client
	ids []string
	buf bytes.Buffer
}

func (w *blockWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *blockWriter) commit(ctx context.Context, token string) error {
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
	_, err := w.dst.CommitBlockList(ctx, ids, &blockblob.CommitBlockListOptions{
		Metadata:    map[string]*string{MetadataToken: &token},
		HTTPHeaders: &blob.HTTPHeaders{BlobContentType: ptr("application/gzip")},
	})
	if err != nil {
		return fmt.Errorf("backup: commit blocks: %w", err)
	}
	w.ids = ids
	w.buf.Reset()
	return nil
}

func ptr[T any](v T) *T { return &v }

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }

func readSeekNopCloser(b []byte) io.ReadSeekCloser { return nopCloser{bytes.NewReader(b)} }
