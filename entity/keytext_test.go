package entity_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/argerr"
)

// TestErrorsNameKeysAsArgerr: entity's errors name keys in the one text of
// the library (argerr.Keys, argerr.EntityKeys): an entity's RowKey even
// when empty, a transaction's PartitionKey alone, and a key too long to
// print whole cut as argerr cuts it.
func TestErrorsNameKeysAsArgerr(t *testing.T) {
	long := strings.Repeat("ü", 50)
	for _, c := range []struct {
		err  error
		keys string
	}{
		{&entity.ServiceError{Op: "Get", Table: "t", PartitionKey: long, RowKey: "r", StatusCode: 404, Code: "ResourceNotFound"}, argerr.Keys(long, "r")},
		{&entity.RowError{Op: "Get", Table: "t", PartitionKey: "p", RowKey: "", Err: errors.New("x")}, argerr.EntityKeys("p", "")},
		{&entity.ETagError{Op: "Update", Table: "t", PartitionKey: "p", RowKey: long}, argerr.EntityKeys("p", long)},
		{&entity.OutcomeError{Op: "Insert", Table: "t", PartitionKey: long, RowKey: long}, argerr.Keys(long, long)},
		{&entity.ServiceError{Op: "Submit", Table: "t", PartitionKey: "p", StatusCode: 400}, argerr.Keys("p", "")},
	} {
		msg := c.err.Error()
		if !strings.Contains(msg, " ("+c.keys+"): ") {
			t.Errorf("%q does not name the keys as %s", msg, c.keys)
		}
	}
}
