package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The three forms of progress: a line rewritten in place on a terminal,
// plain lines with the resume token otherwise, JSON events with --json.
func TestProgressForms(t *testing.T) {
	for _, c := range []struct {
		name      string
		tty, json bool
		check     func(string) bool
	}{
		{"terminal", true, false, func(s string) bool {
			return strings.HasPrefix(s, "\r\033[K") && !strings.Contains(s, "\n") && strings.Contains(s, "1,500 entities") && strings.Contains(s, "ETA") && !strings.Contains(s, "tk1.")
		}},
		{"plain", false, false, func(s string) bool {
			return strings.HasPrefix(s, "tablekit copy: 1500 entities, ") && strings.HasSuffix(s, ", resume: tk1.abc\n") && strings.Count(s, "\n") == 1
		}},
		{"json", false, true, func(s string) bool {
			var ev map[string]any
			return json.Unmarshal([]byte(s), &ev) == nil && ev["event"] == "progress" && ev["count"] == float64(1500) && ev["resume"] == "tk1.abc" && ev["etaSeconds"] != nil
		}},
	} {
		var errb bytes.Buffer
		cl := newCLI(context.Background(), "copy", nil, &bytes.Buffer{}, &errb)
		cl.errTTY, cl.json, cl.quiet, cl.interval = c.tty, c.json, true, time.Hour // quiet: no ticker; print by hand
		p := cl.startProgress("entities", 1000)
		p.start = time.Now().Add(-time.Second)
		p.set(1500)
		p.setFraction(0.5)
		p.setToken("tk1.abc")
		p.print()
		if !c.check(errb.String()) {
			t.Errorf("%s: %q", c.name, errb.String())
		}
		p.stop()
	}
	if group(1234567) != "1,234,567" || group(-1000) != "-1,000" || clock(3725*time.Second) != "1:02:05" || clock(65*time.Second) != "1:05" {
		t.Error("group or clock")
	}
	for in, want := range map[string]int64{"100MB": 100e6, "64MiB": 64 << 20, "1G": 1 << 30, "512k": 512 << 10, "1000": 1000, "1.5KB": 1500} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "x", "-1MB", "0", "1e400"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) took it", bad)
		}
	}
}
