package steps

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/google/uuid"
)

// attemptMetadata is the blob metadata name under which PutBlobIfAbsent
// records its attempt id.
const attemptMetadata = "tablekitattempt"

// PutBlob writes data as the block blob name, replacing what is there: one
// Put Blob request, harmless to repeat.
func PutBlob(ctx context.Context, c *container.Client, name string, data []byte) error {
	_, err := c.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), nil)
	if err != nil {
		return fmt.Errorf("steps: writing blob %s: %w", name, err)
	}
	return nil
}

// PutBlobIfAbsent writes data as the block blob name unless a blob of that
// name exists (If-None-Match: *). created reports whether the stored blob
// is this call's write, also when azcore resent the request after its
// reply was lost: the blob carries this call's attempt id in its metadata,
// read back (one more request) only when the blob was found to exist. A
// write of this call that another writer replaced (an unconditional
// PutBlob) inside azcore's retry window reports false: the blob stored is
// not this call's.
func PutBlobIfAbsent(ctx context.Context, c *container.Client, name string, data []byte) (created bool, err error) {
	attempt := uuid.NewString()
	bb := c.NewBlockBlobClient(name)
	_, err = bb.Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{
		Metadata: map[string]*string{attemptMetadata: to.Ptr(attempt)},
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{
			IfNoneMatch: to.Ptr(azcore.ETagAny),
		}},
	})
	if err == nil {
		return true, nil
	}
	if !bloberror.HasCode(err, bloberror.BlobAlreadyExists) {
		return false, fmt.Errorf("steps: writing blob %s: %w", name, err)
	}
	props, err := bb.GetProperties(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("steps: blob %s exists; reading its metadata: %w", name, err)
	}
	for k, v := range props.Metadata {
		if strings.EqualFold(k, attemptMetadata) && v != nil && *v == attempt {
			return true, nil
		}
	}
	return false, nil
}

// DeleteBlob deletes the blob name and its snapshots; a missing blob counts
// as done.
func DeleteBlob(ctx context.Context, c *container.Client, name string) error {
	_, err := c.NewBlobClient(name).Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)})
	if err != nil && !bloberror.HasCode(err, bloberror.BlobNotFound) {
		return fmt.Errorf("steps: deleting blob %s: %w", name, err)
	}
	return nil
}
