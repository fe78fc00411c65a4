package wide_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/patterns/wide"
)

// Eight is one property of each EDM type.
type Eight struct {
	S string
	I int32
	L int64
	D float64
	B bool
	T time.Time
	G uuid.UUID
	X []byte
}

// Eighty is ten of them: 80 properties.
type Eighty struct {
	A0, A1, A2, A3, A4, A5, A6, A7, A8, A9 Eight `table:",flatten"`
}

// Thousand is a struct of 1,000 properties, 125 of each EDM type, with
// names such as B3_A7_G.
type Thousand struct {
	PK                                               string    `table:"PartitionKey,pk"`
	ID                                               string    `table:"RowKey,rk"`
	ETag                                             string    `table:",etag"`
	Updated                                          time.Time `table:",timestamp"`
	B0, B1, B2, B3, B4, B5, B6, B7, B8, B9, B10, B11 Eighty    `table:",flatten"`
	C0, C1, C2, C3, C4                               Eight     `table:",flatten"`
}

// fill sets every property of v from r: values of every range, including
// the extremes of each type.
func fill(v any, r *rand.Rand) {
	var walk func(rv reflect.Value)
	walk = func(rv reflect.Value) {
		switch x := rv.Addr().Interface().(type) {
		case *Eight:
			*x = randomEight(r)
			return
		}
		for i := range rv.NumField() {
			f := rv.Field(i)
			if f.Kind() == reflect.Struct && f.Type() != reflect.TypeFor[time.Time]() {
				walk(f)
			}
		}
	}
	walk(reflect.ValueOf(v).Elem())
}

func randomEight(r *rand.Rand) Eight {
	ints := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32, 1 << 53, -(1 << 53) - 1}
	doubles := []float64{0, math.Copysign(0, -1), 0.1, 1e300, -1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, 2}
	e := Eight{
		S: randomString(r),
		I: int32(r.Uint32()),
		L: r.Int64() - r.Int64(),
		D: r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20)),
		B: r.IntN(2) == 0,
		T: time.Date(1601+r.IntN(8398), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1e7)*100, time.UTC),
		G: uuid.UUID(randomBytes(r, 16)),
		X: randomBytes(r, r.IntN(40)),
	}
	if r.IntN(4) == 0 {
		e.L = ints[r.IntN(len(ints))]
		e.D = doubles[r.IntN(len(doubles))]
	}
	return e
}

func randomString(r *rand.Rand) string {
	runes := []rune("aZ09 '\"\\/\n\t<>&é€😀\u00a0\u2028")
	s := make([]rune, r.IntN(24))
	for i := range s {
		s[i] = runes[r.IntN(len(runes))]
	}
	return string(s)
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// Bag is a logical entity of any number of properties, in an extra map.
type Bag struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Props        map[string]any `table:",extra"`
}

// newTable returns a wide table over a new table of the test service.
func newTable[T any](t testing.TB, cfg wide.Config) (*wide.Table[T], *aztables.Client) {
	t.Helper()
	client := env.Table(t)
	return wrap[T](t, client, cfg), client
}

func wrap[T any](t testing.TB, client *aztables.Client, cfg wide.Config) *wide.Table[T] {
	t.Helper()
	tbl, err := entity.NewTable[T](client)
	if err != nil {
		t.Fatal(err)
	}
	w, err := wide.New(tbl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// physical lists the RowKeys stored in a partition, and each row's
// property count, straight from the service.
func physical(t testing.TB, client *aztables.Client, pk string) map[string]int {
	t.Helper()
	raw, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for d, err := range raw.Query(context.Background(), entity.Query{Filter: filter.PK(pk)}) {
		if err != nil {
			t.Fatal(err)
		}
		out[d.RowKey] = len(d.Properties)
	}
	return out
}

// bagOf returns a bag of n properties whose values all say who wrote them
// (writer) and, by their names, which property they are.
func bagOf(pk, id string, writer, n int) *Bag {
	b := &Bag{PartitionKey: pk, RowKey: id, Props: make(map[string]any, n)}
	for i := range n {
		b.Props["P"+strconv.Itoa(i)] = fmt.Sprintf("w%d-p%d", writer, i)
	}
	return b
}
