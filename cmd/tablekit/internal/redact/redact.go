// Package redact keeps account keys and SAS signatures out of everything
// tablekit prints: the secrets it was given are replaced wherever they
// appear (as given, URL-escaped or URL-unescaped), and so is anything shaped
// like one — an AccountKey= or SharedAccessSignature= setting, a sig= query
// parameter, an Authorization header.
package redact

import (
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Mask replaces a secret.
const Mask = "REDACTED"

// Redactor replaces secrets in text. The zero value replaces only the
// shapes; a nil *Redactor does too.
type Redactor struct {
	secrets []string
}

var shapes = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(AccountKey\s*=\s*)[^;\s"']+`),
	regexp.MustCompile(`(?i)(SharedAccessSignature\s*=\s*)[^;\s"']+`),
	regexp.MustCompile(`(?i)([?&](?:amp;)?sig=)[^&\s"'#]+`),
	regexp.MustCompile(`(?i)(Authorization:\s*)[^\r\n]+`),
	regexp.MustCompile(`(?i)("?(?:AccountKey|sig|Authorization)"?\s*:\s*")[^"]+`),
}

// New returns a Redactor of the given secrets (empty ones are ignored).
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add adds secrets, with their URL-escaped and unescaped forms.
func (r *Redactor) Add(secrets ...string) {
	for _, s := range secrets {
		for _, v := range []string{s, url.QueryEscape(s), url.PathEscape(s), unescape(s)} {
			if len(v) >= 4 && !slices.Contains(r.secrets, v) {
				r.secrets = append(r.secrets, v)
			}
		}
	}
	// Longest first, so a secret inside another is not replaced first.
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
}

func unescape(s string) string {
	u, err := url.QueryUnescape(s)
	if err != nil {
		return s
	}
	return u
}

// String returns s with every secret and secret-shaped text masked.
func (r *Redactor) String(s string) string {
	if r != nil {
		for _, sec := range r.secrets {
			s = strings.ReplaceAll(s, sec, Mask)
		}
	}
	for _, re := range shapes {
		s = re.ReplaceAllString(s, "${1}"+Mask)
	}
	return s
}

// Secrets finds the secrets in a connection string or a URL: an account
// key, a SharedAccessSignature and the signature inside it, a URL's sig.
func Secrets(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "accountkey":
			out = append(out, strings.TrimSpace(v))
		case "sharedaccesssignature":
			v = strings.TrimSpace(v)
			out = append(out, v)
			out = append(out, sigOf(v)...)
		}
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		out = append(out, sigOf(s[i+1:])...)
	}
	return out
}

func sigOf(query string) []string {
	var out []string
	for _, p := range strings.Split(strings.TrimPrefix(query, "?"), "&") {
		k, v, ok := strings.Cut(p, "=")
		if ok && strings.EqualFold(k, "sig") && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Writer returns a writer that masks what r masks in each Write. Callers
// write whole lines (or whole progress updates) at a time, so a secret is
// never cut across two writes.
func Writer(w io.Writer, r *Redactor) io.Writer { return &writer{w: w, r: r} }

type writer struct {
	w io.Writer
	r *Redactor
}

func (w *writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, w.r.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
