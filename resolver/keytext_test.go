package resolver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/resolver"
)

// TestErrorsNameKeysAsArgerr: resolver's errors name a row's keys in the
// one text of the library (argerr.EntityKeys), a long key cut as argerr
// cuts it, an empty RowKey named.
func TestErrorsNameKeysAsArgerr(t *testing.T) {
	long := strings.Repeat("k", 100)
	cause := errors.New("the cause")
	for _, c := range []struct {
		err  error
		keys string
	}{
		{&resolver.RowError{PartitionKey: long, RowKey: "", Err: cause}, argerr.EntityKeys(long, "")},
		{resolver.MigrateFailure{PartitionKey: "p", RowKey: long, Err: cause}, argerr.EntityKeys("p", long)},
	} {
		if msg := c.err.Error(); !strings.Contains(msg, c.keys+")") && !strings.Contains(msg, c.keys+":") {
			t.Errorf("%q does not name the keys as %s", msg, c.keys)
		}
	}
}
