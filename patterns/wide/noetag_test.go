package wide_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/wide"
)

// TestReplaceWithoutETagSaysWhatToDo: a Replace of a value that carries
// no ETag is refused before any request (the table points at a closed
// port, so a request would fail otherwise) with an error that names the
// operation and the keys and says what to do instead.
func TestReplaceWithoutETagSaysWhatToDo(t *testing.T) {
	t.Parallel()
	tbl, err := entity.NewTableFromConnectionString[Employee](
		"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+
			"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"+
			"TableEndpoint=http://127.0.0.1:1/devstoreaccount1/", "nowhere", nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wide.New(tbl, wide.Config{})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Replace(context.Background(), &Employee{Dept: "eng", ID: "e1", Name: "Ada"})
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if !errors.Is(err, entity.ErrNoETag) || errors.Is(err, entity.ErrUnreachable) ||
		!strings.HasPrefix(msg, `wide: replace (PartitionKey "eng", RowKey "e1"): `) || !strings.Contains(msg, "use Upsert") {
		t.Errorf("Replace without an ETag: %v; want entity.ErrNoETag naming replace, the keys and Upsert", err)
	}
}
