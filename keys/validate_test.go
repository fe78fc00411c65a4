package keys_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/keys"
)

func TestValidate(t *testing.T) {
	valid := []string{
		"",
		"Sales",
		"empid_000123_2012",
		"email_jonesj@contoso.com",
		"O'Brien",
		"a b!\"$%&'()*+,-.:;<=>@[]^_`{|}~",
		"\u00A0é中\uE000\uFFFD\uFFFF\U0001F600\U0010FFFF",
		strings.Repeat("a", keys.MaxKeyLength),
		strings.Repeat("中", keys.MaxKeyLength),            // 1536 bytes, 512 code units
		strings.Repeat("\U0001F600", keys.MaxKeyLength/2), // 2048 bytes, 512 code units
	}
	for _, k := range valid {
		if err := keys.Validate(k); err != nil {
			t.Errorf("Validate(%.30q): %v", k, err)
		}
	}

	tests := []struct {
		key  string
		rule keys.Rule
		pos  int
		char rune
	}{
		{"a/b", keys.RuleForbiddenChar, 1, '/'},
		{`a\b`, keys.RuleForbiddenChar, 1, '\\'},
		{"#", keys.RuleForbiddenChar, 0, '#'},
		{"what?", keys.RuleForbiddenChar, 4, '?'},
		{"\x00", keys.RuleForbiddenChar, 0, 0},
		{"a\tb", keys.RuleForbiddenChar, 1, '\t'},
		{"a\nb", keys.RuleForbiddenChar, 1, '\n'},
		{"\x1f", keys.RuleForbiddenChar, 0, 0x1F},
		{"ab\x7f", keys.RuleForbiddenChar, 2, 0x7F},
		{"é\u0080", keys.RuleForbiddenChar, 2, 0x80},
		{"\u009F", keys.RuleForbiddenChar, 0, 0x9F},
		{"ok\xff", keys.RuleInvalidUTF8, 2, 0xFFFD},
		{"\xed\xa0\x80", keys.RuleInvalidUTF8, 0, 0xFFFD}, // an encoded surrogate
		{"中\xe4\xb8", keys.RuleInvalidUTF8, 3, 0xFFFD},    // truncated
		{"a/\xff", keys.RuleForbiddenChar, 1, '/'},        // the first problem is reported
	}
	for _, tt := range tests {
		err := keys.Validate(tt.key)
		var ke *keys.KeyError
		if !errors.Is(err, keys.ErrInvalidKey) || !errors.As(err, &ke) {
			t.Errorf("Validate(%q) = %v; want an ErrInvalidKey", tt.key, err)
			continue
		}
		if ke.Rule != tt.rule || ke.Pos != tt.pos || ke.Char != tt.char || ke.Value != tt.key || ke.Func != "Validate" || ke.Part != -1 {
			t.Errorf("Validate(%q): %+v; want rule %v at %d (%U)", tt.key, *ke, tt.rule, tt.pos, tt.char)
		}
	}

	tooLong := []struct {
		key string
		got int
	}{
		{strings.Repeat("a", keys.MaxKeyLength+1), 513},
		{strings.Repeat("中", keys.MaxKeyLength+1), 513},
		{strings.Repeat("\U0001F600", keys.MaxKeyLength/2) + "a", 513},
		{strings.Repeat("a", 511) + "\U0001F600", 513}, // 2 code units for one character
		{strings.Repeat("a", 2000), 2000},
	}
	for _, tt := range tooLong {
		err := keys.Validate(tt.key)
		var ke *keys.KeyError
		if !errors.As(err, &ke) || ke.Rule != keys.RuleTooLong || ke.Got != tt.got || ke.Limit != keys.MaxKeyLength || ke.Pos != -1 {
			t.Errorf("Validate(%d bytes) = %v; want too long with %d code units", len(tt.key), err, tt.got)
		}
	}

	if err := keys.ValidateLimit(strings.Repeat("a", 1024), 1024); err != nil {
		t.Errorf("ValidateLimit(1024 a, 1024): %v", err)
	}
	var ke *keys.KeyError
	if err := keys.ValidateLimit("abc", 2); !errors.As(err, &ke) || ke.Limit != 2 || ke.Got != 3 || ke.Func != "ValidateLimit" {
		t.Errorf("ValidateLimit(abc, 2) = %v", err)
	}
	if err := keys.ValidateLimit("a#", 100); !errors.As(err, &ke) || ke.Rule != keys.RuleForbiddenChar {
		t.Errorf("ValidateLimit(a#) = %v", err)
	}
}

// Property: Validate agrees with an independent statement of the rules.
func TestValidateProperty(t *testing.T) {
	r := newRand(40)
	for i := range 50000 {
		var k string
		if i%5 == 0 {
			k = randBytes(r, 8)
		} else {
			k = randString(r, allChars, 8)
		}
		err := keys.Validate(k)
		if want := !hasForbidden(k); (err == nil) != want {
			t.Fatalf("Validate(%q) = %v, want valid %v", k, err, want)
		}
	}
}

func TestUTF16Len(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int
	}{
		{"", 0}, {"abc", 3}, {"é", 1}, {"中文", 2}, {"\uFFFF", 1}, {"\U0001F600", 2}, {"a\U0010FFFFb", 4}, {"\xff\xfe", 2},
	} {
		if got := keys.UTF16Len(tt.s); got != tt.want {
			t.Errorf("UTF16Len(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestKeyErrorMessages(t *testing.T) {
	tests := []struct {
		err  error
		want []string
	}{
		{keys.Validate("a/b"), []string{"keys: Validate: forbidden character", `"a/b"`, "at byte 1", `'/'`, "U+002F"}},
		{keys.Validate("a\xff"), []string{"invalid UTF-8", "at byte 1"}},
		{keys.Validate(strings.Repeat("x", 600)), []string{"too long", "600 UTF-16 code units", "more than 512", "…"}},
		{func() error { _, err := keys.PadChecked(123456, 4); return err }(), []string{"PadChecked", "6 digits", "width 4"}},
		{func() error { _, err := keys.PadChecked(1, 0); return err }(), []string{"width 0", "1..512"}},
		{func() error { _, err := keys.Join("_", "a", "b_c"); return err }(), []string{"Join: part 1: separator", `"b_c"`, "at byte 1"}},
		{func() error { _, err := keys.BucketChecked("v", -2); return err }(), []string{"bucket count -2"}},
		{func() error { _, err := keys.ParseInvertedTicks("x"); return err }(), []string{"ParseInvertedTicks: syntax", `"x"`}},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("no error; want one containing %q", tt.want)
			continue
		}
		msg := tt.err.Error()
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("error %q does not contain %q", msg, w)
			}
		}
	}
	// A wrapped error still matches.
	wrapped := errors.Join(errors.New("entity: RowKey"), keys.Validate("#"))
	var ke *keys.KeyError
	if !errors.Is(wrapped, keys.ErrInvalidKey) || !errors.As(wrapped, &ke) || ke.Rule != keys.RuleForbiddenChar {
		t.Errorf("wrapped error does not match: %v", wrapped)
	}
	if errors.Is(keys.Validate("#"), errors.New("keys: invalid key")) {
		t.Error("KeyError matches an unrelated error")
	}
}
