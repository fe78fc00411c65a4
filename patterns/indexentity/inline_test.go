package indexentity_test

import (
	"testing"

	"github.com/tablekit/tablekit/patterns/internal/patterntest/indextest"
)

// TestInline runs indextest.Inline: with an inline processor
// (eventual.NewInline) the OtherPartition and TableWide lists are exact as
// soon as each write returns, with no queue and no worker.
func TestInline(t *testing.T) {
	t.Parallel()
	indextest.Inline(t, suite())
}
