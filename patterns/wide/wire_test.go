package wide_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/patterns/wide"
)

// TestWireFormat: the package doc's Wire format example is exactly what
// Insert stores, read back with a raw aztables client; only the write's
// token and version number are masked.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, client := newTable[Bag](t, wide.Config{})
	b := Bag{PartitionKey: "Sales", RowKey: "emp1", Props: map[string]any{"Name": "Jones", "Age": int32(41)}}
	if err := w.Insert(ctx, &b); err != nil {
		t.Fatal(err)
	}
	var got []string
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			delete(m, "Timestamp")
			delete(m, "odata.etag")
			line, err := json.Marshal(m) // members sorted, as the service sends them
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(line))
		}
	}
	if len(got) != 2 {
		t.Fatalf("stored %d entities: %q", len(got), got)
	}
	var head struct{ WideSeq, WideVersion string }
	if err := json.Unmarshal([]byte(got[0]), &head); err != nil {
		t.Fatal(err)
	}
	seq, err := strconv.ParseInt(head.WideSeq, 10, 64)
	if err != nil || seq <= 0 || seq >= 1<<53 {
		t.Fatalf("WideSeq %q: %v", head.WideSeq, err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(head.WideVersion) {
		t.Fatalf("WideVersion %q is not a UUID", head.WideVersion)
	}
	slot := "WideH" + strconv.FormatInt(100+seq%16, 10)[1:]
	mask := strings.NewReplacer(head.WideVersion, "<t>", `"`+head.WideSeq+`"`, `"<s>"`, `"`+slot+`"`, `"WideH<s mod 16>"`)
	for i := range got {
		got[i] = mask.Replace(got[i])
	}
	want := docExample(t)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stored:\n%s\ndoc.go says:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// docExample returns the JSON lines of the doc's Wire format example.
func docExample(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		switch {
		case line == "// # Wire format":
			in = true
		case in && strings.HasPrefix(line, "// # "):
			return out
		case in && strings.HasPrefix(line, "//\t{"):
			out = append(out, strings.TrimPrefix(line, "//\t"))
		}
	}
	t.Fatal("doc.go has no wire format example")
	return nil
}
