package blobfield_test

import (
	"reflect"
	"testing"

	"github.com/tablekit/tablekit/internal/blobfield"
)

func TestOf(t *testing.T) {
	type E struct {
		PartitionKey, RowKey string
		Photo                []byte `table:",blob"`
		CV                   string `table:"Resume,omitempty,blob"`
		Notes                string `table:"Blob"`
		hidden               []byte `table:",blob"`
	}
	_ = E{}.hidden
	got := blobfield.Of(reflect.TypeFor[E]())
	want := []blobfield.Field{
		{Index: 2, Name: "Photo", GoName: "Photo", Type: reflect.TypeFor[[]byte]()},
		{Index: 3, Name: "Resume", GoName: "CV", Type: reflect.TypeFor[string]()},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Of = %+v, want %+v", got, want)
	}
	if blobfield.Of(reflect.TypeFor[int]()) != nil {
		t.Error("Of(int) is not nil")
	}
	for tag, want := range map[string]bool{",blob": true, "X,blob": true, "blob": false, "X,blobs": false, "": false, "-": false} {
		if _, ok := blobfield.Tagged(tag); ok != want {
			t.Errorf("Tagged(%q) = %v", tag, ok)
		}
	}
}
