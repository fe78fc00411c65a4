package large

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
)

// openBlob starts reading the blob of ref: one Get Blob request, resumed
// by azblob's retry reader (a ranged request on the same ETag) if the
// connection breaks. The reader checks the size and checksum as it goes.
func (t *Table[T]) openBlob(ctx context.Context, f *field, ref Ref) (*verifier, error) {
	resp, err := t.blobs.NewBlobClient(ref.Blob).DownloadStream(ctx, nil)
	if err != nil {
		if bloberror.HasCode(err, bloberror.BlobNotFound) {
			return nil, &BlobError{Field: f.GoName, Blob: ref.Blob, Reason: "the blob does not exist", Err: ErrBlobMissing, Cause: err}
		}
		return nil, fmt.Errorf("large: reading blob %s: %w", ref.Blob, err)
	}
	body := resp.NewRetryReader(ctx, &blob.RetryReaderOptions{MaxRetries: 3})
	v := &verifier{body: body, field: f.GoName, ref: ref, h: ref.Checksum.newHash()}
	if resp.ContentLength != nil && *resp.ContentLength != ref.Size {
		body.Close()
		return nil, v.corrupt(fmt.Sprintf("the blob holds %d bytes, the entity recorded %d", *resp.ContentLength, ref.Size))
	}
	return v, nil
}

// fetch reads the whole value of ref, checked, into one buffer of the
// size the entity recorded (which the blob's Content-Length must match):
// no copy beside the one from the connection, no growth. The bytes are
// checksummed by a second goroutine as they arrive, so that the check
// adds CPU time but next to no wall time to the transfer (BenchmarkRead).
func (t *Table[T]) fetch(ctx context.Context, f *field, ref Ref) ([]byte, error) {
	v, err := t.openBlob(ctx, f, ref)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	buf := make([]byte, ref.Size)
	filled := make(chan int64, 64) // how far buf is filled; the hasher follows
	sum := make(chan Ref, 1)
	go func() {
		h := ref.Checksum.newHash()
		var done int64
		for n := range filled {
			h.Write(buf[done:n])
			done = n
		}
		sum <- ref.withSum(h)
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
	case got != ref:
		return nil, v.corrupt(differs(ref))
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
		case v.ref.withSum(v.h) != v.ref:
			return n, v.corrupt(differs(v.ref))
		}
	}
	return n, err
}

// differs is the reason of a blob whose checksum is not ref's.
func differs(ref Ref) string {
	if ref.Checksum == ChecksumCRC32C {
		return "its CRC-32C differs from the one the entity recorded"
	}
	return "its SHA-256 differs from the one the entity recorded"
}

func (v *verifier) Close() error { return v.body.Close() }

func (v *verifier) corrupt(reason string) error {
	v.err = &BlobError{Field: v.field, Blob: v.ref.Blob, Reason: reason, Err: ErrBlobCorrupt}
	return v.err
}
