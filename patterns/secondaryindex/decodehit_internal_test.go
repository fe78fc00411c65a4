package secondaryindex

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
)

// entryBody is an email entry as the service returns it (minimal
// metadata).
var entryBody = []byte(`{"odata.metadata":"http://127.0.0.1:10002/devstoreaccount1/$metadata#t/@Element","odata.etag":"W/\"datetime'2026-11-27T04%3A11%3A04.3073475Z'\"","PartitionKey":"email_02","RowKey":"email_jones3@contoso.com","Timestamp":"2026-11-27T04:11:04.3073475Z","Age":34,"Email":"jones3@contoso.com","FirstName":"John","LastName":"Jones","TkPrimaryPK":"D000","TkPrimaryRK":"empid_000003","TkWrite":"......tW28wXL5Va7PIK5z"}`)

type benchEmp struct {
	PartitionKey, RowKey, ETag string
	FirstName, LastName, Email string
	Age                        int32
}

// BenchmarkDecodeHit is the client's own work on a lookup's entry.
func BenchmarkDecodeHit(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		h, err := decodeHit[benchEmp](entryBody, false)
		if err != nil || h.pk != "D000" || h.e.RowKey != "empid_000003" {
			b.Fatal(h, err)
		}
	}
}

// TestEntryKeysFromJSON: an entry's keys and its primary's are read from the
// JSON as a decode into strings would read them; a key stored as
// another type is a DecodeError naming it.
func TestEntryKeysFromJSON(t *testing.T) {
	m, err := entryKeys(entryBody)
	if err != nil || m != (entryMeta{PartitionKey: "email_02", RowKey: "email_jones3@contoso.com", TkPrimaryPK: "D000", TkPrimaryRK: "empid_000003"}) {
		t.Fatalf("%+v, %v", m, err)
	}
	m, err = entryKeys([]byte(`{"PartitionKey":"a\"b","RowKey":"\u00e9","TkPrimaryPK@odata.type":"Edm.String","TkPrimaryPK":"p","TkPrimaryRK":null}`))
	if err != nil || m != (entryMeta{PartitionKey: `a"b`, RowKey: "é", TkPrimaryPK: "p"}) {
		t.Fatalf("escapes, annotation, null: %+v, %v", m, err)
	}
	for body, prop := range map[string]string{
		`{"PartitionKey":"a","TkPrimaryPK":7}`:                     "TkPrimaryPK",
		`{"TkPrimaryRK@odata.type":"Edm.Int64","TkPrimaryRK":"7"}`: "TkPrimaryRK",
		`{"RowKey":true}`: "RowKey",
		`{"RowKey":"a",`:  "",
		`[1]`:             "",
	} {
		_, err := entryKeys([]byte(body))
		var de *entity.DecodeError
		if !errors.Is(err, entity.ErrDecode) || !errors.As(err, &de) || de.Property != prop {
			t.Errorf("%s: %v", body, err)
		}
		// decodeHit agrees: the entry is a bad row.
		if _, err := decodeHit[benchEmp]([]byte(body), false); !errors.Is(err, entity.ErrDecode) {
			t.Errorf("decodeHit %s: %v", body, err)
		}
	}
}
