package backup_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/backup"
	"github.com/tablekit/tablekit/entity"
)

// FuzzReadCSV: any input is read without a panic, and what it yields writes
// back as CSV that reads to the same entities.
func FuzzReadCSV(f *testing.F) {
	f.Add("PartitionKey,RowKey,Timestamp,N,N@type\np,r,,1,Int32\n")
	f.Add("PartitionKey,RowKey,B,B@type,D,D@type\n\"a,b\",,AAE=,Binary,NaN,Double\n")
	f.Add("RowKey,PartitionKey,S\nr,p,\"x\"\"y\"\n")
	f.Add("PartitionKey;RowKey;N;N@type\r\np;r;\"1,5\";Double\r\n")
	f.Add("\ufeffPartitionKey\tRowKey\tS\np\tr\t\"a\tb\"\n")
	f.Fuzz(func(t *testing.T, in string) {
		var rows []entity.DynamicEntity
		cols := map[string]bool{}
		for d, err := range backup.ReadCSV(strings.NewReader(in)) {
			if err != nil {
				return
			}
			rows = append(rows, d)
			for k := range d.Properties {
				cols[k] = true
			}
		}
		var names []string
		for k := range cols {
			names = append(names, k)
		}
		var out bytes.Buffer
		seq := func(yield func(entity.DynamicEntity, error) bool) {
			for _, d := range rows {
				if !yield(d, nil) {
					return
				}
			}
		}
		if err := backup.WriteCSV(&out, names, seq); err != nil {
			return // a column name the CSV reserves
		}
		i := 0
		for d, err := range backup.ReadCSV(&out) {
			if err != nil {
				t.Fatalf("written CSV does not read back: %v\n%s", err, out.String())
			}
			if i >= len(rows) || d.PartitionKey != rows[i].PartitionKey || d.RowKey != rows[i].RowKey || len(d.Properties) != len(rows[i].Properties) {
				t.Fatalf("row %d changed on the way back", i)
			}
			i++
		}
		if i != len(rows) {
			t.Fatalf("%d rows back, want %d", i, len(rows))
		}
	})
}

// FuzzImportLines: any backup body — gzip-compressed by the fuzzer, or
// raw bytes taken as the compressed stream itself (several members, damaged
// ones) — is read or refused with an error, never a panic. The context is
// cancelled, so entities that decode reach BulkWrite and fail there
// without a request.
func FuzzImportLines(f *testing.F) {
	f.Add(`{"tablekit.backup":1}`+"\n"+`{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Int64","N":"1"}`+"\n", false)
	f.Add(`{"tablekit.backup":1}`+"\n"+`{"PartitionKey":"p"`+"\n", false)
	f.Add("", false)
	f.Add(`{"tablekit.backup":1}`+"\r\n"+`{"PartitionKey":"p","RowKey":"r","N":9223372036854775807}`+"\r\n", false)
	two := member(`{"tablekit.backup":1}`+"\n"+`{"PartitionKey":"p",`) + member(`"RowKey":"r"}`+"\n")
	f.Add(two, true)
	f.Add(two[:len(two)-3], true)
	f.Add(member(`{"tablekit.backup":1}`+"\n")+"garbage", true)
	f.Fuzz(func(t *testing.T, body string, raw bool) {
		in := []byte(body)
		if !raw {
			in = []byte(member(body))
		}
		// A table over a client that cannot reach anything: entities that
		// decode are handed to BulkWrite, which fails them without a panic.
		tbl, err := entity.NewTableFromConnectionString[entity.DynamicEntity](
			"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=http://127.0.0.1:1/devstoreaccount1;", "fuzztable", nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // no request is ever made
		sum, err := backup.Import(ctx, tbl, bytes.NewReader(in), backup.ImportOptions{SegmentEntities: 2})
		if err == nil && sum.Entities > 0 {
			t.Fatalf("%d entities imported with a cancelled context", sum.Entities)
		}
	})
}

// member is s as one gzip member.
func member(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}
