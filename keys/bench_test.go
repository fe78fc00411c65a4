package keys_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/keys"
)

// Results are stored here so that the compiler keeps the calls.
var (
	sinkString string
	sinkInt    int
	sinkTime   time.Time
	sinkErr    error
	sinkParts  []string
	sinkBytes  []byte
)

var benchTime = time.Date(2014, 7, 31, 18, 0, 0, 123456700, time.UTC)

func BenchmarkPad(b *testing.B) {
	b.ReportAllocs()
	for i := range b.N {
		sinkString = keys.Pad(int64(i), 8)
	}
}

func BenchmarkAppendPad(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 32)
	for i := range b.N {
		buf = keys.AppendPad(buf[:0], int64(i), 8)
	}
	sinkBytes = buf
}

func BenchmarkPadChecked(b *testing.B) {
	b.ReportAllocs()
	for i := range b.N {
		sinkString, sinkErr = keys.PadChecked(int64(i), 12)
	}
}

func BenchmarkOrderedInt(b *testing.B) {
	b.ReportAllocs()
	for i := range b.N {
		sinkString = keys.OrderedInt(int64(i) - 1<<40)
	}
}

func BenchmarkParseOrderedInt(b *testing.B) {
	b.ReportAllocs()
	k := keys.OrderedInt(-123456789)
	for range b.N {
		v, _ := keys.ParseOrderedInt(k)
		sinkInt = int(v)
	}
}

func BenchmarkTicks(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkInt = int(keys.Ticks(benchTime))
	}
}

func BenchmarkInvertedTicks(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkString = keys.InvertedTicks(benchTime)
	}
}

func BenchmarkAppendInvertedTicks(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 32)
	for range b.N {
		buf = keys.AppendInvertedTicks(buf[:0], benchTime)
	}
	sinkBytes = buf
}

func BenchmarkParseInvertedTicks(b *testing.B) {
	b.ReportAllocs()
	k := keys.InvertedTicks(benchTime)
	for range b.N {
		sinkTime, sinkErr = keys.ParseInvertedTicks(k)
	}
}

func BenchmarkTicksKey(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkString = keys.TicksKey(benchTime)
	}
}

func BenchmarkInvertedTicksSeq(b *testing.B) {
	b.ReportAllocs()
	for i := range b.N {
		sinkString = keys.InvertedTicksSeq(benchTime, uint32(i))
	}
}

func BenchmarkSequencerNext(b *testing.B) {
	b.ReportAllocs()
	var s keys.Sequencer
	for range b.N {
		sinkTime, _ = s.Next(benchTime)
	}
}

func BenchmarkCompound(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkString = keys.Compound("empid", "000123", "2012")
	}
}

func BenchmarkCompoundEscaped(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkString = keys.Compound("New York", "Jones!", "2012")
	}
}

func BenchmarkAppendCompound(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 64)
	for range b.N {
		buf = keys.AppendCompound(buf[:0], "empid", "000123", "2012")
	}
	sinkBytes = buf
}

func BenchmarkCompoundChecked(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkString, sinkErr = keys.CompoundChecked("empid", "000123", "2012")
	}
}

func BenchmarkSplitCompound(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkParts, sinkErr = keys.SplitCompound("empid 000123 2012")
	}
}

func BenchmarkSplitCompoundEscaped(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkParts, sinkErr = keys.SplitCompound("New! York Jones!! 2012")
	}
}

func BenchmarkCompoundPrefix(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkString, sinkString = keys.CompoundPrefix("empid", "000123")
	}
}

func BenchmarkJoin(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkString, sinkErr = keys.Join("_", "empid", "000123", "2012")
	}
}

func BenchmarkPrefixRange(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		_, sinkString = keys.PrefixRange("email_jonesj@contoso")
	}
}

func BenchmarkCompare(b *testing.B) {
	b.ReportAllocs()
	x, y := "email_jonesj@contoso.com", "email_jonesk@contoso.com"
	for range b.N {
		sinkInt = keys.Compare(x, y)
	}
}

func BenchmarkBucket(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkString = keys.Bucket("employee-000123", 16)
	}
}

func BenchmarkBucket10(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkString = keys.Bucket("employee-000123", 10)
	}
}

func BenchmarkValidate(b *testing.B) {
	b.ReportAllocs()
	k := "email_jonesj@contoso.com"
	for range b.N {
		sinkErr = keys.Validate(k)
	}
}

func BenchmarkValidateLong(b *testing.B) {
	b.ReportAllocs()
	k := strings.Repeat("é中a", keys.MaxKeyLength/3)
	b.SetBytes(int64(len(k)))
	for range b.N {
		sinkErr = keys.Validate(k)
	}
}

func BenchmarkEscape(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkString = keys.Escape("orders/2024 #7?")
	}
}

func BenchmarkEscapeNoop(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkString = keys.Escape("email_jonesj@contoso")
	}
}

func BenchmarkUnescape(b *testing.B) {
	b.ReportAllocs()
	e := keys.Escape("orders/2024 #7?")
	for range b.N {
		sinkString, sinkErr = keys.Unescape(e)
	}
}
