package backup

import (
	"errors"
	"testing"
)

// A blob that holds a block blob's most blocks takes no more: the commit
// stops with ErrTooLarge before any request (its client is nil here),
// rather than meet the service's refusal of the block list, which reads
// like another writer's change (ErrBlobChanged).
func TestBlockWriterStopsAtTheMostBlocks(t *testing.T) {
	w := &blockWriter{ids: make([]string, maxBlocks)}
	w.buf.WriteString("segment")
	if err := w.commit(t.Context(), Checkpoint{}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("commit of block %d: %v, want ErrTooLarge", maxBlocks+1, err)
	}
}
