package bloblog

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Blob names follow the design guide: <service>/YYYY/MM/DD/HHMM/NNNNNN.log,
// the period's start in UTC and a sequence number within the period, so
// that names sort by period, then by sequence, and one prefix lists a
// service's day or period.
const (
	dirLayout = "2006/01/02/1504/"
	seqDigits = 6
	maxSeq    = 999999
	extension = ".log"
)

// maxServiceLen keeps blob names well under the service's 1,024 characters.
const maxServiceLen = 256

// checkService returns why s cannot name a log, or "": one or more
// segments separated by '/', each of ASCII letters, digits, '-', '_' and
// '.', and not "." or "..".
func checkService(s string) string {
	if s == "" {
		return "empty service name"
	}
	if len(s) > maxServiceLen {
		return "service name longer than " + strconv.Itoa(maxServiceLen) + " bytes"
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "service name " + strconv.Quote(s) + " has an empty, \".\" or \"..\" segment"
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
				return "character " + strconv.QuoteRuneToASCII(rune(c)) + " not allowed in service name " + strconv.Quote(s) + " (letters, digits, '-', '_', '.', and '/' between segments)"
			}
		}
	}
	return ""
}

// periodDir is the folder of the period that starts at start.
func periodDir(service string, start time.Time) string {
	return service + "/" + start.UTC().Format(dirLayout)
}

// blobName is the name of a period's blob number seq.
func blobName(service string, start time.Time, seq int) string {
	return fmt.Sprintf("%s%0*d%s", periodDir(service, start), seqDigits, seq, extension)
}

// parseName reads a blob name of service: its period's start and
// sequence number; ok is false for any other name.
func parseName(service, name string) (start time.Time, seq int, ok bool) {
	rest, found := strings.CutPrefix(name, service+"/")
	if !found || len(rest) != len(dirLayout)+seqDigits+len(extension) || !strings.HasSuffix(rest, extension) {
		return time.Time{}, 0, false
	}
	start, err := time.Parse(dirLayout, rest[:len(dirLayout)])
	if err != nil || start.Format(dirLayout) != rest[:len(dirLayout)] {
		return time.Time{}, 0, false
	}
	digits := rest[len(dirLayout) : len(dirLayout)+seqDigits]
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return time.Time{}, 0, false
		}
	}
	seq, _ = strconv.Atoi(digits)
	if seq < 1 {
		return time.Time{}, 0, false
	}
	return start, seq, true
}

// commonPrefix returns the longest common prefix of a and b.
func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return a[:i]
		}
	}
	return a[:n]
}
