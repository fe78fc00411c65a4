package drift

import "testing"

func TestSummaryCounts(t *testing.T) {
	var s Summary
	for _, k := range []Kind{Missing, Stale, Stale, Orphan, Orphan, Orphan} {
		s.Count(Finding{Kind: k})
	}
	if s.Missing != 1 || s.Stale != 2 || s.Orphans != 3 || s.Drift() != 6 {
		t.Fatalf("%+v", s)
	}
	if Kind(9).String() != "drift.Kind(9)" || Orphan.String() != "orphan" {
		t.Fatal("Kind names")
	}
	f := Finding{Kind: Stale, Index: "email", Primary: Key{PartitionKey: "Sales", RowKey: "1"}, Entry: Key{PartitionKey: "Sales", RowKey: "email_a"}, Detail: "Email differs"}
	if got := f.String(); got != "email stale entry Sales/email_a for primary Sales/1: Email differs" {
		t.Fatal(got)
	}
	f.Primary = Key{}
	if got := f.String(); got != "email stale entry Sales/email_a: Email differs" {
		t.Fatalf("a finding without a primary: %q", got)
	}
	s = Summary{}
	s.Count(Finding{Kind: Duplicate})
	if s.Duplicates != 1 || s.Drift() != 1 || Duplicate.String() != "duplicate" {
		t.Fatalf("Duplicate: %+v", s)
	}
}
