package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"1. 2519954711959999999_4294967295  18:00:04  (#0 in its tick)  shutdown",
		"2. 2519954711979999999_4294967294  18:00:02  (#1 in its tick)  request 3 (same tick)",
		"plain .NET-compatible key for 2014-07-31T18:00:00Z: 2519954711999999999",
		"RowKey ge 'empid 000123' and RowKey lt 'empid 000123!'",
		`* "empid 000123 2013"`,
		`  "empid 000124 2012"`,
		"RowKey ge 'name O''Brien,! Mary'",
		"RowKey ge 'email_j' and RowKey lt 'email_k'",
		"   email_jonesj@contoso.com",
		"== given timestamps",
		"  2516298551999999999 A-1001  2026-03-02 10:00:00  A-1001\n  2516298551999999999 A-1002  2026-03-02 10:00:00  A-1002\n  2516307191999999999 A-0999  2026-02-20 10:00:00  A-0999\n",
		"(a Sequencer would have keyed A-0999 at 2026-03-02 10:00:00, not 2026-02-20 10:00:00)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "email_kim") {
		t.Errorf("the prefix range returned email_kim:\n%s", out.String())
	}
}
