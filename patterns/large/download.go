package large

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
)

// openBlob starts reading the blob of ref: one Get Blob request, resumed
// by azblob's retry reader (a ranged request on the same ETag) if the
// connection breaks. The reader checks the size and hash as it goes.
func (t *Table[T]) openBlob(ctx context.Context, f *field, ref Ref) (*verifier, error) {
	resp, err := t.blobs.NewBlobClient(ref.Blob).DownloadStream(ctx, nil)
	if err != nil {
		if bloberror.HasCode(err, bloberror.BlobNotFound) {
			return nil, &BlobError{Field: f.GoName, Blob: ref.Blob, Reason: "the blob does not exist", Err: ErrBlobMissing, Cause: err}
		}
		return nil, fmt.Errorf("large: reading blob %s: %w", ref.Blob, err)
	}
	body := resp.NewRetryReader(ctx, &blob.RetryReaderOptions{MaxRetries: 3})
	v := &verifier{body: body, field: f.GoName, ref: ref, h: sha256.New()}
	if resp.ContentLength != nil && *resp.ContentLength != ref.Size {
		body.Close()
		return nil, v.corrupt(fmt.Sprintf("the blob holds %d bytes, the entity recorded %d", *resp.ContentLength, ref.Size))
	}
	return v, nil
}

// fetch reads the whole value of ref, checked.
func (t *Table[T]) fetch(ctx context.Context, f *field, ref Ref) ([]byte, error) {
	v, err := t.openBlob(ctx, f, ref)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	buf := make([]byte, ref.Size)
	if _, err := io.ReadFull(v, buf); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, v.corrupt(fmt.Sprintf("the blob ends after %d bytes, the entity recorded %d", v.n, ref.Size))
		}
		return nil, err
	}
	// The next read must be the end, where the hash is checked.
	var one [1]byte
	if _, err := io.ReadFull(v, one[:]); !errors.Is(err, io.EOF) {
		if err == nil {
			return nil, v.corrupt(fmt.Sprintf("the blob holds more than the %d bytes the entity recorded", ref.Size))
		}
		return nil, err
	}
	return buf, nil
}

// verifier reads a blob, hashing and counting; at the end it returns
// io.EOF only when the size and SHA-256 are the ones recorded.
type verifier struct {
	body  io.ReadCloser
	field string
	ref   Ref
	h     hash.Hash
	n     int64
	err   error // sticky: the corruption found
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.body.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.n > v.ref.Size {
		return 0, v.corrupt(fmt.Sprintf("the blob holds more than the %d bytes the entity recorded", v.ref.Size))
	}
	if errors.Is(err, io.EOF) {
		switch {
		case v.n != v.ref.Size:
			return n, v.corrupt(fmt.Sprintf("the blob ends after %d bytes, the entity recorded %d", v.n, v.ref.Size))
		case [32]byte(v.h.Sum(nil)) != v.ref.SHA256:
			return n, v.corrupt("its SHA-256 differs from the one the entity recorded")
		}
	}
	return n, err
}

func (v *verifier) Close() error { return v.body.Close() }

func (v *verifier) corrupt(reason string) error {
	v.err = &BlobError{Field: v.field, Blob: v.ref.Blob, Reason: reason, Err: ErrBlobCorrupt}
	return v.err
}
