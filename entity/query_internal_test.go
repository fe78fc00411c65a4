package entity

import "testing"

func TestPageTop(t *testing.T) {
	cases := []struct{ pageSize, limit, yielded, want int }{
		{0, 0, 0, 0},          // the service's default page
		{100, 0, 0, 100},      // page size alone
		{0, 250, 0, 250},      // limit alone
		{100, 250, 200, 50},   // what is left of the limit
		{0, 5000, 0, 1000},    // never above the service's maximum
		{0, 1 << 40, 0, 1000}, // nor anything that would overflow $top
	}
	for _, c := range cases {
		if got := pageTop(c.pageSize, c.limit, c.yielded); got != c.want {
			t.Errorf("pageTop(%d, %d, %d) = %d, want %d", c.pageSize, c.limit, c.yielded, got, c.want)
		}
	}
}

func TestEntityArray(t *testing.T) {
	body := `{"odata.metadata":"x","value":[{"PartitionKey":"a","RowKey":"1","S":"}]"},{"PartitionKey":"a","RowKey":"2"}]}`
	got, err := entityArray([]byte(body), nil)
	if err != nil || len(got) != 2 || string(got[1]) != `{"PartitionKey":"a","RowKey":"2"}` {
		t.Fatalf("got %q, %v", got, err)
	}
	if got, err := entityArray([]byte(`{"value":[]}`), nil); err != nil || len(got) != 0 {
		t.Fatalf("empty page: %q, %v", got, err)
	}
	for _, bad := range []string{``, `{"value":[1]}`, `{"value":[{"a":1}`, `{"value":[{}]} x`, `{"value" [{}]}`, `[{}]`} {
		if _, err := entityArray([]byte(bad), nil); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzEntityArray: the query-page splitter never panics, and every element
// it returns is a slice of the input that starts with '{' and ends with '}'.
func FuzzEntityArray(f *testing.F) {
	for _, s := range []string{
		`{"odata.metadata":"x","value":[{"PartitionKey":"a","RowKey":"1"},{"S":"}]\"{"}]}`,
		`{"value":[]}`, `{}`, `{"value":[{}],"value":[{}]}`, `{"value":"[{}]"}`, `{"a":{"value":[{}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := entityArray(data, nil)
		if err != nil {
			return
		}
		for _, it := range items {
			if len(it) < 2 || it[0] != '{' || it[len(it)-1] != '}' {
				t.Fatalf("element %q of %q", it, data)
			}
		}
	})
}
