package jsonscan

import "testing"

func TestEntityArray(t *testing.T) {
	body := `{"odata.metadata":"x","value":[{"PartitionKey":"a","RowKey":"1","S":"}]"},{"PartitionKey":"a","RowKey":"2"}]}`
	got, err := EntityArray([]byte(body), nil)
	if err != nil || len(got) != 2 || string(got[1]) != `{"PartitionKey":"a","RowKey":"2"}` {
		t.Fatalf("got %q, %v", got, err)
	}
	if got, err := EntityArray([]byte(`{"value":[]}`), nil); err != nil || len(got) != 0 {
		t.Fatalf("empty page: %q, %v", got, err)
	}
	for _, bad := range []string{``, `{"value":[1]}`, `{"value":[{"a":1}`, `{"value":[{}]} x`, `{"value" [{}]}`, `[{}]`} {
		if _, err := EntityArray([]byte(bad), nil); err == nil {
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
		items, err := EntityArray(data, nil)
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
