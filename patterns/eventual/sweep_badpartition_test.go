package eventual_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/integration/faults"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestSweepMarkersGoesOnPastAPartitionItCannotDelete: every delete of
// partition p (its $batch and each single delete) fails before it is
// sent. A table-wide SweepMarkers does not stop at p: q's expired markers
// are gone, the error names partition p and unwraps to the failure, and
// the count is q's 3. Read raw, p still holds its expired markers — none
// lost, none counted — and a healthy sweep then finishes p.
func TestSweepMarkersGoesOnPastAPartitionItCannotDelete(t *testing.T) {
	t.Parallel()
	tbl := markerTable(t)
	ofP := func(r *http.Request) bool {
		if r.Method == http.MethodDelete {
			u := r.URL.String()
			return strings.Contains(u, "PartitionKey='p'") || strings.Contains(u, "PartitionKey=%27p%27")
		}
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/$batch") && strings.Contains(bodyOf(r), "PartitionKey='p'")
	}
	inj := faults.New(faults.Config{FailBefore: 1, Match: ofP})
	n, err := eventual.SweepMarkers(t.Context(), patterntest.View[Account](t, env.With(inj), tbl), sweepNow)
	if inj.Stats().FailedBefore == 0 {
		t.Fatal("no delete of p failed")
	}
	if n != 3 || !errors.Is(err, faults.ErrInjected) {
		t.Fatalf("SweepMarkers = %d, %v; want 3 and the failure", n, err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "eventual: ") || !strings.Contains(msg, `PartitionKey "p"`) {
		t.Errorf("the error does not name partition p: %q", msg)
	}
	swept(t, tbl, "p/old0", "p/old1", "p/old2")
	if n, err := eventual.SweepMarkers(t.Context(), tbl, sweepNow); n != 3 || err != nil {
		t.Fatalf("the healthy sweep = %d, %v; want 3", n, err)
	}
	swept(t, tbl)
}
