package backup

import (
	"encoding/csv"
	"slices"
	"strings"
	"testing"
)

// FuzzCSVReader: the package's CSV reader reads what encoding/csv reads —
// the same records, or an error where it fails — with each delimiter
// ReadCSV detects (comma, semicolon, tab), except that a CR LF inside a
// quoted field stays CR LF (encoding/csv makes it LF).
func FuzzCSVReader(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n", "a,b\r\n\"x\r\ny\",2\r\n", "\"a\"\"b\",c", "a,\"b\nc\"\n\n\nd,e\r", "a\"b,c\n", "\"a\"b,c\n",
		"\"unterminated\n", ",,\n", "\r\n\r\na\r", "\"\",\"\"\n", "x,\"y\"\r",
		"a;b\tc\n\"x;y\";\"z\tw\"\r\n", "a\t\"b\"\t\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for i := range len(separators) {
			comma := separators[i]
			std := csv.NewReader(strings.NewReader(in))
			std.FieldsPerRecord = -1
			std.Comma = rune(comma)
			ours := newCSVReader(strings.NewReader(in))
			ours.comma = comma
			for n := 1; ; n++ {
				want, werr := std.Read()
				got, gerr := ours.Read()
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("delimiter %q, record %d: encoding/csv %q %v, ours %q %v", comma, n, want, werr, got, gerr)
				}
				if werr != nil {
					break
				}
				norm := make([]string, len(got))
				for i, g := range got {
					norm[i] = strings.ReplaceAll(g, "\r\n", "\n")
				}
				if !slices.Equal(norm, want) {
					t.Fatalf("delimiter %q, record %d: encoding/csv %q, ours %q", comma, n, want, got)
				}
			}
		}
	})
}
