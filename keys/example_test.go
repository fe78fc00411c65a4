package keys_test

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

func ExamplePad() {
	fmt.Println(keys.Pad(123, 8))
	fmt.Println(keys.Pad(123456789, 8)) // never truncated
	_, err := keys.PadChecked(123456789, 8)
	fmt.Println(err)
	// Output:
	// 00000123
	// 123456789
	// keys: PadChecked: number wider than width: "123456789" has 9 digits, more than width 8
}

func ExampleOrderedInt() {
	nums := []int64{42, -1, 0, -300, 7}
	var ks []string
	for _, n := range nums {
		ks = append(ks, keys.OrderedInt(n))
	}
	slices.Sort(ks)
	for _, k := range ks {
		n, _ := keys.ParseOrderedInt(k)
		fmt.Println(k, n)
	}
	// Output:
	// -9223372036854775508 -300
	// -9223372036854775807 -1
	// 00000000000000000000 0
	// 00000000000000000007 7
	// 00000000000000000042 42
}

func ExampleInvertedTicks() {
	t := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	k := keys.InvertedTicks(t)
	fmt.Println(k)
	fmt.Println(keys.InvertedTicks(t.Add(time.Second)) < k) // later sorts first
	back, _ := keys.ParseInvertedTicks(k)
	fmt.Println(back)
	// Output:
	// 2519954711999999999
	// true
	// 2014-07-31 18:00:00 +0000 UTC
}

func ExampleTicks() {
	t := time.Date(2014, 7, 31, 20, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	fmt.Println(keys.Ticks(t)) // the instant, whatever the zone
	fmt.Println(keys.TicksKey(t))
	// Output:
	// 635424264000000000
	// 0635424264000000000
}

func ExampleSequencer() {
	var seq keys.Sequencer
	now := time.Date(2014, 7, 31, 18, 0, 0, 0, time.UTC)
	for range 3 { // three entries in the same tick
		t, n := seq.Next(now)
		fmt.Println(keys.InvertedTicksSeq(t, n))
	}
	// Output:
	// 2519954711999999999_4294967295
	// 2519954711999999999_4294967294
	// 2519954711999999999_4294967293
}

func ExampleCompound() {
	k := keys.Compound("empid", keys.Pad(123, 6), "2012")
	fmt.Printf("%q\n", k)
	fmt.Printf("%q\n", keys.Compound("New York", "a!b"))
	parts, _ := keys.SplitCompound("New! York a!!b")
	fmt.Printf("%q\n", parts)
	// Output:
	// "empid 000123 2012"
	// "New! York a!!b"
	// ["New York" "a!b"]
}

func ExampleCompoundPrefix() {
	from, to := keys.CompoundPrefix("empid", keys.Pad(123, 6))
	f, _ := filter.PK("Sales").And(filter.RowKeyRange(from, to)).Build()
	fmt.Println(f)
	// Output:
	// PartitionKey eq 'Sales' and RowKey ge 'empid 000123' and RowKey lt 'empid 000123!'
}

func ExampleJoin() {
	k, _ := keys.Join("_", "empid", keys.Pad(123, 6), "2012")
	fmt.Println(k)
	_, err := keys.Join("_", "email", "jones_j@contoso.com")
	fmt.Println(err)
	// Output:
	// empid_000123_2012
	// keys: Join: part 1: separator: "jones_j@contoso.com" at byte 5 ('_', U+005F)
}

func ExamplePrefixRange() {
	from, to := keys.PrefixRange("email_a")
	fmt.Println(from, to)
	f, _ := filter.RowKeyRange(from, to).Build()
	fmt.Println(f)
	_, to = keys.PrefixRange("")
	fmt.Printf("%q (no upper bound)\n", to)
	// Output:
	// email_a email_b
	// RowKey ge 'email_a' and RowKey lt 'email_b'
	// "" (no upper bound)
}

func ExampleCompare() {
	ks := []string{"b", "a\uFFFF", "a\U0001F600", "a"}
	slices.SortFunc(ks, keys.Compare) // the service's order
	fmt.Printf("%+q\n", ks)
	slices.Sort(ks) // Go's order differs for supplementary characters
	fmt.Printf("%+q\n", ks)
	// Output:
	// ["a" "a\U0001f600" "a\uffff" "b"]
	// ["a" "a\uffff" "a\U0001f600" "b"]
}

func ExampleBucket() {
	fmt.Println(keys.Bucket("employee-000123", 100))
	fmt.Println(slices.Collect(keys.Buckets(4)))
	// Output:
	// 93
	// [0 1 2 3]
}

func ExampleValidate() {
	err := keys.Validate("orders/2024")
	fmt.Println(err)
	var ke *keys.KeyError
	if errors.Is(err, keys.ErrInvalidKey) && errors.As(err, &ke) {
		fmt.Println(ke.Rule, ke.Pos)
	}
	// Output:
	// keys: Validate: forbidden character: "orders/2024" at byte 6 ('/', U+002F)
	// forbidden character 6
}

func ExampleEscape() {
	e := keys.Escape("orders/2024 #7?")
	fmt.Printf("%q\n", e)
	fmt.Println(keys.Validate(e))
	back, _ := keys.Unescape(e)
	fmt.Println(back)
	// Output:
	// "orders.12024 W\"17>1"
	// <nil>
	// orders/2024 #7?
}
