package large

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// maxPutBlob is the largest []byte or string value written with one Put
// Blob request (azblob's limit for a single upload); larger ones go in
// blocks.
const maxPutBlob = 256 << 20

// putBytes writes data, whose reference is ref, as the new blob ref.Blob:
// one Put Blob request, harmless to repeat (no other write uses the name).
func (t *Table[T]) putBytes(ctx context.Context, ref Ref, o owner, data []byte) error {
	name := ref.Blob
	if len(data) > maxPutBlob {
		_, err := t.putBlocks(ctx, name, o, bytes.NewReader(data))
		return err
	}
	_, err := t.blobs.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{Metadata: metadata(o, ref)})
	if err != nil {
		return fmt.Errorf("large: writing blob %s: %w", name, err)
	}
	return nil
}

// putStream writes what r yields as the new blob name and returns its
// reference: one Put Blob request when it fits one block, else a Put Block
// per block (Config.Concurrency at once) and a Put Block List that
// commits them with the metadata. A failure leaves no blob (uncommitted
// blocks are dropped by the service within a week). An empty r is no
// value: the zero Ref, nothing written.
func (t *Table[T]) putStream(ctx context.Context, name string, o owner, r io.Reader) (Ref, error) {
	first := make([]byte, t.cfg.BlockSize)
	n, err := io.ReadFull(r, first)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		if n == 0 {
			return Ref{}, nil
		}
		ref := sumRef(name, t.cfg.Checksum, first[:n])
		if err := t.putBytes(ctx, ref, o, first[:n]); err != nil {
			return Ref{}, err
		}
		return ref, nil
	case err != nil:
		return Ref{}, fmt.Errorf("large: reading the value of blob %s: %w", name, err)
	}
	return t.putBlocks(ctx, name, o, io.MultiReader(bytes.NewReader(first), r))
}

// putBlocks uploads r in blocks of Config.BlockSize and commits them.
func (t *Table[T]) putBlocks(ctx context.Context, name string, o owner, r io.Reader) (Ref, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bb := t.blobs.NewBlockBlobClient(name)
	h := t.cfg.Checksum.newHash()
	var (
		ids  []string
		size int64
		wg   sync.WaitGroup
		mu   sync.Mutex
		werr error
	)
	fail := func(err error) {
		mu.Lock()
		if werr == nil {
			werr = err
			cancel()
		}
		mu.Unlock()
	}
	sem := make(chan struct{}, t.cfg.Concurrency)
	for {
		buf := make([]byte, t.cfg.BlockSize)
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			h.Write(buf[:n])
			size += int64(n)
			var raw [8]byte
			binary.BigEndian.PutUint64(raw[:], uint64(len(ids)))
			id := base64.StdEncoding.EncodeToString(raw[:]) // every id of a blob has one length
			ids = append(ids, id)
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				break
			}
			wg.Go(func() {
				defer func() { <-sem }()
				if _, err := bb.StageBlock(ctx, id, streaming.NopCloser(bytes.NewReader(buf[:n])), nil); err != nil {
					fail(fmt.Errorf("large: writing a block of blob %s: %w", name, err))
				}
			})
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			fail(fmt.Errorf("large: reading the value of blob %s: %w", name, err))
			break
		}
	}
	wg.Wait()
	if werr != nil {
		return Ref{}, werr
	}
	if err := ctx.Err(); err != nil {
		return Ref{}, err
	}
	if size == 0 {
		return Ref{}, nil
	}
	ref := Ref{Blob: name, Size: size, Checksum: t.cfg.Checksum}.withSum(h)
	if _, err := bb.CommitBlockList(ctx, ids, &blockblob.CommitBlockListOptions{Metadata: metadata(o, ref)}); err != nil {
		return Ref{}, fmt.Errorf("large: committing blob %s: %w", name, err)
	}
	return ref, nil
}
