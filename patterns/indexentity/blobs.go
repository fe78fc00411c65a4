package indexentity

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strconv"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/tablekit/tablekit/keys"
)

// blobList is one value's list in a Blob index as read: its members and
// the blob's ETag ("" when there is no blob).
type blobList struct {
	name    string
	members []string
	etag    azcore.ETag
}

// readBlob reads the blob name; a missing blob is an empty list.
func (s *Set[T]) readBlob(ctx context.Context, ix *index[T], name string) (*blobList, error) {
	l := &blobList{name: name}
	resp, err := s.blobs.NewBlobClient(name).DownloadStream(ctx, nil)
	if bloberror.HasCode(err, bloberror.BlobNotFound) {
		return l, nil
	}
	if err != nil {
		return nil, &StepError{Step: "read index blob " + strconv.Quote(name), Index: ix.Name, Err: err}
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, &StepError{Step: "read index blob " + strconv.Quote(name), Index: ix.Name, Err: err}
	}
	if resp.ETag != nil {
		l.etag = *resp.ETag
	}
	ms, err := decodeBlob(data)
	if err == nil && !sortedUnique(ms) {
		err = errors.New("the members are not in key order, or repeat")
	}
	if err != nil {
		return nil, &CorruptError{Index: ix.Name, Blob: name, Reason: err.Error()}
	}
	l.members = ms
	return l, nil
}

// writeBlob stores members as the list l was read as, on condition that
// the blob is still that version (absent, when l.etag is ""); an empty
// list deletes the blob. A lost race is errChanged.
func (s *Set[T]) writeBlob(ctx context.Context, ix *index[T], l *blobList, members []string) error {
	c := s.blobs.NewBlockBlobClient(l.name)
	var err error
	switch {
	case len(members) == 0 && l.etag == "":
		return nil
	case len(members) == 0:
		_, err = c.Delete(ctx, &blob.DeleteOptions{AccessConditions: &blob.AccessConditions{
			ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(l.etag)}}})
	default:
		cond := &blob.ModifiedAccessConditions{IfMatch: to.Ptr(l.etag)}
		if l.etag == "" {
			cond = &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}
		}
		_, err = c.Upload(ctx, streaming.NopCloser(bytes.NewReader(encodeBlob(members))), &blockblob.UploadOptions{
			HTTPHeaders:      &blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain; charset=utf-8")},
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: cond},
		})
	}
	if bloberror.HasCode(err, bloberror.ConditionNotMet, bloberror.BlobAlreadyExists, bloberror.BlobNotFound) {
		return errChanged
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) && (re.StatusCode == 412 || re.StatusCode == 409 || re.StatusCode == 404) {
		return errChanged
	}
	if err != nil {
		return &StepError{Step: "write index blob " + strconv.Quote(l.name), Index: ix.Name, Err: err}
	}
	return nil
}

// editBlob adds member to (or removes it from) value's list in a Blob
// index, unless it holds (or lacks) it already: read, change, write on
// condition of the ETag read, again from the read when another writer got
// there first — or when a lost reply made azcore's resend fail on a
// condition the first try had changed (adding or removing a member is
// idempotent: the read tells).
func (s *Set[T]) editBlob(ctx context.Context, ix *index[T], pk, value, member string, add bool) error {
	name := ix.blobName(pk, value)
	err := s.cfg.Retry.Retry(ctx, func(ctx context.Context) error {
		l, err := s.readBlob(ctx, ix, name)
		if err != nil {
			return err
		}
		i, found := slices.BinarySearchFunc(l.members, member, keys.Compare)
		switch {
		case add == found:
			return nil
		case add:
			return s.writeBlob(ctx, ix, l, slices.Insert(l.members, i, member))
		default:
			return s.writeBlob(ctx, ix, l, slices.Delete(l.members, i, i+1))
		}
	})
	return wrap(err, "sync: write index blob "+strconv.Quote(name), ix.Name, "", "")
}
