package backup

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
)

// storedSamples are entities of every type at its extremes, with keys and
// strings that need escaping.
func storedSamples() []entity.DynamicEntity {
	var out []entity.DynamicEntity
	strs := []string{"", "a\r\nb\t\x00\x1f\"\\", "😀\uffff", "\u2028\u2029x", "<&>", strings.Repeat("é", 1000)}
	for i := range 60 {
		d := entity.DynamicEntity{PartitionKey: []string{"", "'", "日本", "a\"b", "<&>"}[i%5], RowKey: fmt.Sprintf("r%d\u2028", i)}
		d.Set("S", strs[i%len(strs)])
		d.Set("I32", []int32{math.MinInt32, math.MaxInt32, 0}[i%3])
		d.Set("I64", []int64{math.MinInt64, math.MaxInt64, 0, 1 << 60}[i%4])
		d.Set("D", []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 2, 0.1, 1e21, 1e-7, math.MaxFloat64, math.SmallestNonzeroFloat64}[i%10])
		d.Set("T", []time.Time{time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 123456700, time.FixedZone("x", 3600))}[i%3])
		d.Set("G", uuid.NewSHA1(uuid.NameSpaceOID, []byte{byte(i)}))
		d.Set("Bin", bytes.Repeat([]byte{byte(i), 0xff}, i*100))
		d.Set("B", i%2 == 0)
		if i%4 == 0 {
			d.Set("Z_last", "z")
			d.Set("A_first", int32(1))
		}
		out = append(out, d)
	}
	return out
}

// entity.MarshalStored writes the very bytes of entity.Marshal for every
// entity Marshal takes, so that an export is the same whichever wrote a
// line.
func TestMarshalStoredIsMarshal(t *testing.T) {
	for _, d := range storedSamples() {
		want, err := entity.Marshal(&d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := entity.MarshalStored(&d)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("MarshalStored\n%s\nMarshal\n%s\n%v", got, want, err)
		}
	}
}

// An entity Marshal refuses — as Azurite and Cosmos DB store them — is
// written as a line that decodes back to the same entity.
func TestMarshalStoredWritesWhatMarshalRefuses(t *testing.T) {
	d := entity.DynamicEntity{PartitionKey: "p#?", RowKey: strings.Repeat("k", 2000)}
	d.Set("T", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC))
	d.Set("a-b", "x")
	d.Set("1st", int64(7))
	d.Set("Bin", make([]byte, 70_000))
	if _, err := entity.Marshal(&d); err == nil {
		t.Fatal("Marshal took the entity")
	}
	line, err := entity.MarshalStored(&d)
	if err != nil {
		t.Fatal(err)
	}
	back := decodeLine(2, line)
	if back.err != nil {
		t.Fatalf("the line does not decode: %v\n%.300s", back.err, line)
	}
	again, err := entity.MarshalStored(&back.d)
	if err != nil || !bytes.Equal(again, line) || len(back.d.Properties) != len(d.Properties) {
		t.Fatalf("the line decodes to another entity: %.300s", again)
	}
}
