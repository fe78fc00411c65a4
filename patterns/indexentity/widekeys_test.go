package indexentity_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// awkward are keys chosen to sort apart: empty, a space and '!' (the
// compound separator and escape), a quote, characters beyond the BMP and
// characters of U+E000–U+FFFF (which Go's string order puts after the
// former and the service before).
var awkward = []string{"", " ", "!", "'", "O'Brien", "a b", "a!b", "a", "\U0001F600", "\uFF5E", "\uE000x", "\U00010000", "z"}

// TestTableWideAwkwardKeys inserts Paris employees under awkward
// PartitionKeys and RowKeys and lists one member twice, by hand, in a
// bucket that is not its own (as a change of Index.Buckets leaves it):
// LookupValueAll yields each employee once, in the service's key order
// (PartitionKey, then RowKey, by keys.Compare) as a raw query of the
// table returns them, and so does every paging of it with Limit and
// After.
func TestTableWideAwkwardKeys(t *testing.T) {
	ctx := context.Background()
	w := newWideWorld(t, 4)
	var emps []Employee
	for i, pk := range awkward {
		for j, rk := range awkward {
			if (i+j)%3 == 0 {
				emps = append(emps, Employee{PartitionKey: pk, RowKey: rk, City: "Paris"})
			}
		}
	}
	seedWide(t, w, emps)
	// The service's order of the employees, from a raw listing of the
	// table (Azurite's order is the service's: UTF-16 code units).
	var want []string
	for _, row := range rawAll(t, w.emps.Name()) {
		want = append(want, row["PartitionKey"].(string)+"/"+row["RowKey"].(string))
	}
	if len(want) != len(emps) {
		t.Fatalf("%d employees stored of %d", len(want), len(emps))
	}
	// One member also in another bucket's list.
	dup := emps[1]
	m := keys.Compound(dup.PartitionKey, dup.RowKey)
	b, err := strconv.Atoi(keys.Bucket(m, 4))
	if err != nil {
		t.Fatal(err)
	}
	raw := env.TableService.NewClient(w.entries.Name())
	opk := "city_" + keys.Compound("Paris", strconv.Itoa((b+1)%4))
	members := []string{m}
	if got, err := raw.GetEntity(ctx, opk, "city_Paris", nil); err == nil {
		var cur map[string]any
		if err := json.Unmarshal(got.Value, &cur); err != nil {
			t.Fatal(err)
		}
		s, _ := cur["Members"].(string)
		members = append(members, strings.Split(strings.TrimSuffix(s, "\n"), "\n")...)
	} else if !patterntest.IsNotFound(err) {
		t.Fatal(err)
	}
	slices.SortFunc(members, keys.Compare)
	row, err := json.Marshal(map[string]string{"PartitionKey": opk, "RowKey": "city_Paris", "Members": strings.Join(members, "\n") + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.UpsertEntity(ctx, row, nil); err != nil {
		t.Fatal(err)
	}
	s := w.probedSet(t, &readProbe{}, 3)
	if got := wideLookup(t, s, "Paris", indexentity.LookupOptions{}); !slices.Equal(got, want) {
		t.Errorf("LookupValueAll:\n got %q\nwant %q", got, want)
	}
	for _, limit := range []int{1, 2, 5} {
		var paged []string
		var after drift.Key
		hasAfter := false
		for range len(want) + 2 {
			page := wideLookup(t, s, "Paris", indexentity.LookupOptions{Limit: limit, After: after, HasAfter: hasAfter})
			if len(page) == 0 {
				break
			}
			paged = append(paged, page...)
			pk, rk, _ := strings.Cut(page[len(page)-1], "/")
			after = drift.Key{PartitionKey: pk, RowKey: rk}
			hasAfter = true
		}
		if !slices.Equal(paged, want) {
			t.Errorf("pages of %d:\n got %q\nwant %q", limit, paged, want)
		}
	}
}
