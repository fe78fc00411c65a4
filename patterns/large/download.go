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

// fetch reads the whole value of ref, checked. The bytes are hashed by a
// second goroutine as they arrive, so that the check costs next to no time
// beside the transfer: a 5 MiB value is read at the speed of a plain
// download (BenchmarkRead).
func (t *Table[T]) fetch(ctx context.Context, f *field, ref Ref) ([]byte, error) {
	v, err := t.openBlob(ctx, f, ref)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	buf := make([]byte, ref.Size)
	filled := make(chan int64, 64) // how far buf is filled; the hasher follows
	sum := make(chan [32]byte, 1)
	go func() {
		h := sha256.New()
		var done int64
		for n := range filled {
			h.Write(buf[done:n])
			done = n
		}
		sum <- [32]byte(h.Sum(nil))
	}()
	var n, told int64
	for n < ref.Size && err == nil {
		var k int
		k, err = v.body.Read(buf[n:])
		n += int64(k)
		if n-told >= hashChunk || n == ref.Size {
			filled <- n
			told = n
		}
	}
	if told < n {
		filled <- n
	}
	close(filled)
	got := <-sum
	switch {
	case n < ref.Size && errors.Is(err, io.EOF):
		return nil, v.corrupt(fmt.Sprintf("the blob ends after %d bytes, the entity recorded %d", n, ref.Size))
	case err != nil && !errors.Is(err, io.EOF):
		return nil, err
	case got != ref.SHA256:
		return nil, v.corrupt("its SHA-256 differs from the one the entity recorded")
	}
	if err == nil { // the next read must be the end
		var one [1]byte
		if k, err := io.ReadFull(v.body, one[:]); k > 0 {
			return nil, v.corrupt(fmt.Sprintf("the blob holds more than the %d bytes the entity recorded", ref.Size))
		} else if !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	return buf, nil
}

// hashChunk is how many bytes fetch reads before it hands them to its
// hasher: enough to keep the hand-overs few.
const hashChunk = 256 << 10

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
