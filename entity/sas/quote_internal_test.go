package sas

import (
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/argerr"
)

// TestQuoteIsArgerrs: a value a *FieldError names is quoted and cut as
// every error of tablekit quotes a key (argerr.Quote).
func TestQuoteIsArgerrs(t *testing.T) {
	long := strings.Repeat("ä", 40)
	e := invalid("spk", long, "a key range bound must be a valid key")
	if e.Value != argerr.Quote(long) || !strings.HasSuffix(e.Value, `"…`) {
		t.Errorf("Value %s, want %s", e.Value, argerr.Quote(long))
	}
}
