package indexset

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

func TestNames(t *testing.T) {
	n := NewNames[pkgA]("emp_")
	for i, name := range []string{"email", "name"} {
		if err := n.Add(i, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, reason string
	}{
		{"", "must be 1 to 32 ASCII letters and digits"},
		{"last_name", "must be 1 to 32 ASCII letters and digits"},
		{strings.Repeat("a", 33), "must be 1 to 32 ASCII letters and digits"},
		{"email", "is used twice"},
		{"emp", "makes RowKeys that Config.PrimaryPrefix emp_ does not tell apart from the primaries'"},
	} {
		err := n.Add(2, tc.name)
		var de *DeclarationError[pkgA]
		if !errors.As(err, &de) || de.Field != "Name" || de.Reason != tc.reason || de.Position != 2 || !errors.Is(err, errA) {
			t.Errorf("Add(%q): %v", tc.name, err)
		}
	}
	for rk, want := range map[string]int{"email_a@b": 0, "name_Jones": 1, "emp_1": -1, "other_x": -1, "email": -1} {
		if got := n.Of(rk); got != want {
			t.Errorf("Of(%q) = %d, want %d", rk, got, want)
		}
	}
	for rk, want := range map[string]string{
		"emp_1":           "",
		"x1":              "lacks Config.PrimaryPrefix emp_",
		"name_Jones":      "lacks Config.PrimaryPrefix emp_",
		"tablekit.intent": "lacks Config.PrimaryPrefix emp_",
	} {
		err := n.CheckRowKey(rk)
		var re *RowKeyError[pkgA]
		if (want == "") != (err == nil) || err != nil && (!errors.As(err, &re) || re.Reason != want || !errors.Is(err, entity.ErrInvalid)) {
			t.Errorf("CheckRowKey(%q): %v", rk, err)
		}
	}
	open := NewNames[pkgA]("")
	if err := open.Add(0, "name"); err != nil {
		t.Fatal(err)
	}
	for rk, want := range map[string]string{
		"1":               "",
		"name_Jones":      "starts with index name's prefix name_",
		"tablekit.intent": "starts with tablekit's own prefix tablekit.",
	} {
		err := open.CheckRowKey(rk)
		var re *RowKeyError[pkgA]
		if (want == "") != (err == nil) || err != nil && (!errors.As(err, &re) || re.Reason != want) {
			t.Errorf("CheckRowKey(%q) without a prefix: %v", rk, err)
		}
	}
	var ve *entity.ValidationError
	if err := open.CheckKeys("a/b", "1"); !errors.As(err, &ve) || ve.Property != "PartitionKey" {
		t.Errorf("CheckKeys of a bad PartitionKey: %v", err)
	}
	if err := open.CheckKeys("Sales", "name_Jones"); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("CheckKeys of an index's RowKey: %v", err)
	}
}

// TestBuckets: a TableWide index's Buckets is 0 (the default) to max; any
// other index's must be 0.
func TestBuckets(t *testing.T) {
	for _, tc := range []struct {
		n      int
		wide   bool
		want   int
		reason string
	}{
		{0, true, 16, ""},
		{7, true, 7, ""},
		{1000, true, 1000, ""},
		{0, false, 0, ""},
		{-1, true, 0, "is -1, not 0 to 1000"},
		{1001, true, 0, "is 1001, not 0 to 1000"},
		{4, false, 0, "is set on an index that is not TableWide"},
	} {
		got, err := Buckets[pkgA](2, "email", tc.n, tc.wide, 16, 1000)
		var de *DeclarationError[pkgA]
		switch {
		case tc.reason == "" && (err != nil || got != tc.want):
			t.Errorf("Buckets(%d, wide %v) = %d, %v; want %d", tc.n, tc.wide, got, err, tc.want)
		case tc.reason != "" && (!errors.As(err, &de) || de.Field != "Buckets" || de.Reason != tc.reason || de.Position != 2 || de.Index != "email"):
			t.Errorf("Buckets(%d, wide %v): %v; want %q", tc.n, tc.wide, err, tc.reason)
		}
	}
}
