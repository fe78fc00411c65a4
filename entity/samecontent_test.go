package entity_test

import (
	"math"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
)

func TestSameContent(t *testing.T) {
	base := func() entity.DynamicEntity {
		d := entity.DynamicEntity{PartitionKey: "p", RowKey: "r"}
		d.Set("N", int32(7)).Set("F", math.NaN())
		return d
	}
	stamped := base()
	stamped.ETag, stamped.Timestamp = `W/"x"`, time.Now()
	int64ed := base()
	int64ed.Set("N", int64(7))
	otherKey := base()
	otherKey.RowKey = "s"
	extra := base()
	extra.Set("E", "")
	for _, tc := range []struct {
		name string
		o    entity.DynamicEntity
		want bool
	}{
		{"same, NaN included", base(), true},
		{"ETag and Timestamp aside", stamped, true},
		{"Int32 is not Int64", int64ed, false},
		{"another RowKey", otherKey, false},
		{"one more property", extra, false},
	} {
		if got := base().SameContent(tc.o); got != tc.want {
			t.Errorf("%s: SameContent = %v, want %v", tc.name, got, tc.want)
		}
	}
}
