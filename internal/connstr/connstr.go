// Package connstr reads Azure Storage connection strings once, for every
// tablekit package that accepts one: it names what is wrong with a malformed
// string before any client is built, and turns the emulator shorthand
// "UseDevelopmentStorage=true", which the Go SDKs refuse, into the explicit
// endpoints of a local Azurite.
//
// Every host a parsed string leads to is one the string configured: an
// explicit endpoint's host, or ACCOUNT.SERVICE.SUFFIX built from an
// AccountName that follows the service's rule and an EndpointSuffix that is
// a DNS suffix (see Parse). No error repeats an account key, a signature or
// the query of a URL.
package connstr

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/internal/argerr"
)

// ErrMalformed is matched by every error Parse returns. It is
// entity.ErrInvalidConnectionString, one value, so that every package's
// refusal of a connection string matches it; it matches entity.ErrInvalid.
var ErrMalformed error = malformedError{}

type malformedError struct{}

func (malformedError) Error() string        { return "entity: malformed connection string" }
func (malformedError) Is(target error) bool { return target == argerr.Err }

// Error says what is wrong with a connection string. It never repeats the
// account key, a signature or the query of a URL.
type Error struct {
	Reason string
}

func (e *Error) Error() string { return "connection string: " + e.Reason }

// Is makes errors.Is(err, ErrMalformed) true.
func (e *Error) Is(target error) bool { return target == ErrMalformed }

// The development storage account (Azurite's defaults).
const (
	DevAccountName = "devstoreaccount1"
	DevAccountKey  = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	devHost        = "127.0.0.1"
)

// The emulator's ports, as the Azure SDKs and Azurite define them.
const (
	DevBlobPort  = 10000
	DevQueuePort = 10001
	DevTablePort = 10002
)

// settings are the names a storage connection string may use (in any
// case), as the Azure SDKs define them.
var settings = []string{
	"DefaultEndpointsProtocol", "AccountName", "AccountKey", "SharedAccessSignature", "EndpointSuffix",
	"TableEndpoint", "QueueEndpoint", "BlobEndpoint", "FileEndpoint",
	"TableSecondaryEndpoint", "QueueSecondaryEndpoint", "BlobSecondaryEndpoint", "FileSecondaryEndpoint",
	"UseDevelopmentStorage", "DevelopmentStorageProxyUri",
}

// Parsed is a connection string's settings.
type Parsed struct {
	AccountName, AccountKey string
	SAS                     string // SharedAccessSignature, without a leading '?'
	Protocol                string // DefaultEndpointsProtocol; "https" when absent
	EndpointSuffix          string // "core.windows.net" when absent
	TableEndpoint           string // explicit, or derived; always ends with '/'; "" for none
	QueueEndpoint           string
	BlobEndpoint            string
}

// Parse reads a connection string: settings Key=Value separated by ';',
// keys in any case, each at most once, each one of the Azure SDKs' (a
// misspelt or unknown setting is refused; FileEndpoint and the secondary
// endpoints are checked as endpoints and otherwise unused). It accepts:
//
//   - "UseDevelopmentStorage=true", alone or with DevelopmentStorageProxyUri:
//     Azurite's well-known account on its default ports (10000 blob, 10001
//     queue, 10002 table) at 127.0.0.1, or at the proxy URI's scheme and
//     host. The proxy URI is an http(s) URL with a host only: a port, path,
//     query or user is refused, since the emulator's ports are fixed (the
//     Azure SDKs drop them silently).
//   - AccountKey or SharedAccessSignature (or both; the key then signs).
//     A SharedAccessSignature is a query string carrying a signature (sig),
//     without spaces, control characters or '#'.
//   - Explicit TableEndpoint, QueueEndpoint and BlobEndpoint, each an
//     absolute http(s) URL (CheckEndpoint): a DNS name, IPv4 address or
//     bracketed IPv6 address; a port, if any, from 1 to 65535; an optional
//     path of plain segments (an emulator's /ACCOUNT); no user, query or
//     fragment. A query is refused rather than split off: a SAS goes in
//     SharedAccessSignature, which applies to every endpoint.
//   - For a service without an explicit endpoint,
//     DefaultEndpointsProtocol://AccountName.SERVICE.EndpointSuffix/, when
//     AccountName is a storage account name (3 to 24 lower-case letters and
//     digits, CheckAccountName) and EndpointSuffix a DNS suffix
//     (CheckDNSSuffix; "core.windows.net" when absent). An AccountName that
//     is not a storage account name, such as an Azurite custom account's, is
//     accepted with explicit endpoints (CheckEmulatorAccountName: ASCII
//     letters, digits, '-', '_' and '.'): the services without one then have
//     no endpoint. Without an explicit endpoint it is refused.
//
// Anything else is an *Error matching ErrMalformed.
func Parse(s string) (Parsed, error) {
	kv := map[string]string{}
	var keys []string
	n := 0
	for part := range strings.SplitSeq(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n++
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			// The setting is not repeated: it may be a key pasted alone.
			return Parsed{}, malformed("setting %d is not a key=value setting", n)
		}
		for _, seen := range keys {
			if strings.EqualFold(seen, k) {
				return Parsed{}, malformed("setting %s appears twice", quoteName(k))
			}
		}
		keys = append(keys, k)
		kv[k] = strings.TrimSpace(v)
		if kv[k] == "" {
			// An empty endpoint would leave one derived, to a host the
			// string did not name.
			return Parsed{}, malformed("setting %s has no value: give one or leave the setting out", quoteName(k))
		}
	}
	if len(kv) == 0 {
		return Parsed{}, &Error{Reason: "empty"}
	}
	for _, k := range keys {
		if !slices.ContainsFunc(settings, func(s string) bool { return strings.EqualFold(s, k) }) {
			// A setting misspelt would leave an endpoint derived, to a
			// host the string did not mean; a key pasted without its
			// name reads as a setting named after the key (show).
			return Parsed{}, malformed("setting %s is not a storage connection string's (%s)", quoteName(k), strings.Join(settings, ", "))
		}
	}
	get := func(k string) (string, bool) {
		for key, v := range kv {
			if strings.EqualFold(key, k) {
				return v, true
			}
		}
		return "", false
	}
	if dev, ok := get("UseDevelopmentStorage"); ok {
		return parseDev(dev, keys, get)
	}
	if proxy, ok := get("DevelopmentStorageProxyUri"); ok && proxy != "" {
		return Parsed{}, malformed("DevelopmentStorageProxyUri without UseDevelopmentStorage=true")
	}
	value := func(k string) string { v, _ := get(k); return v }
	p := Parsed{
		AccountName:    value("AccountName"),
		AccountKey:     value("AccountKey"),
		Protocol:       value("DefaultEndpointsProtocol"),
		EndpointSuffix: value("EndpointSuffix"),
	}
	if p.Protocol == "" {
		p.Protocol = "https"
	}
	if p.Protocol != "https" && p.Protocol != "http" {
		return Parsed{}, malformed("DefaultEndpointsProtocol %s: want https or http", show(p.Protocol))
	}
	if p.EndpointSuffix == "" {
		p.EndpointSuffix = "core.windows.net"
	}
	if why := CheckDNSSuffix(p.EndpointSuffix); why != "" {
		return Parsed{}, malformed("EndpointSuffix %s %s", show(p.EndpointSuffix), why)
	}
	if sas := value("SharedAccessSignature"); sas != "" {
		if why := checkSAS(sas); why != "" {
			return Parsed{}, malformed("SharedAccessSignature %s", why)
		}
		p.SAS = strings.TrimPrefix(sas, "?")
	}
	if p.AccountKey == "" && p.SAS == "" {
		return Parsed{}, malformed("neither AccountKey nor SharedAccessSignature is set")
	}
	if p.AccountKey != "" && p.AccountName == "" {
		return Parsed{}, malformed("AccountKey without AccountName")
	}
	serviceName := p.AccountName != "" && CheckAccountName(p.AccountName) == ""
	if p.AccountName != "" && !serviceName {
		if why := CheckEmulatorAccountName(p.AccountName); why != "" {
			return Parsed{}, malformed("AccountName %s %s", show(p.AccountName), why)
		}
	}
	// Endpoints tablekit does not use are checked as the others are.
	for _, setting := range []string{"FileEndpoint", "TableSecondaryEndpoint", "QueueSecondaryEndpoint", "BlobSecondaryEndpoint", "FileSecondaryEndpoint"} {
		if raw := value(setting); raw != "" {
			if _, err := CheckEndpoint(setting, raw); err != nil {
				return Parsed{}, err
			}
		}
	}
	explicit := 0
	for _, e := range []struct {
		setting, service string
		to               *string
	}{
		{"TableEndpoint", "table", &p.TableEndpoint},
		{"QueueEndpoint", "queue", &p.QueueEndpoint},
		{"BlobEndpoint", "blob", &p.BlobEndpoint},
	} {
		if raw := value(e.setting); raw != "" {
			ep, err := CheckEndpoint(e.setting, raw)
			if err != nil {
				return Parsed{}, err
			}
			*e.to = ep
			explicit++
		} else if serviceName {
			*e.to = p.Protocol + "://" + p.AccountName + "." + e.service + "." + p.EndpointSuffix + "/"
		}
	}
	switch {
	case explicit == 0 && p.AccountName == "":
		return Parsed{}, malformed("no AccountName and no explicit endpoint")
	case explicit == 0 && !serviceName:
		return Parsed{}, malformed("AccountName %s is not a storage account name (%s), so no endpoint can be derived from it; "+
			"an emulator's custom account needs explicit TableEndpoint, QueueEndpoint or BlobEndpoint", show(p.AccountName), CheckAccountName(p.AccountName))
	}
	return p, nil
}

// parseDev reads UseDevelopmentStorage=true with an optional
// DevelopmentStorageProxyUri, the only setting it takes.
func parseDev(dev string, keys []string, get func(string) (string, bool)) (Parsed, error) {
	if !strings.EqualFold(dev, "true") {
		return Parsed{}, malformed("UseDevelopmentStorage %s: only true is meaningful", show(dev))
	}
	for _, k := range keys {
		if !strings.EqualFold(k, "UseDevelopmentStorage") && !strings.EqualFold(k, "DevelopmentStorageProxyUri") {
			return Parsed{}, malformed("UseDevelopmentStorage=true takes no setting but DevelopmentStorageProxyUri, not %s "+
				"(give an emulator's other account or endpoints as AccountName, AccountKey and explicit endpoints)", quoteName(k))
		}
	}
	scheme, host := "http", devHost
	if proxy, _ := get("DevelopmentStorageProxyUri"); proxy != "" {
		u, err := checkURL("DevelopmentStorageProxyUri", proxy)
		if err != nil {
			return Parsed{}, err
		}
		if u.Port() != "" {
			return Parsed{}, malformed("DevelopmentStorageProxyUri %s has a port: it names a host only, on which the emulator's ports "+
				"%d (blob), %d (queue) and %d (table) are used; for other ports give explicit endpoints", quoteURL(proxy), DevBlobPort, DevQueuePort, DevTablePort)
		}
		if u.Path != "" && u.Path != "/" {
			return Parsed{}, malformed("DevelopmentStorageProxyUri %s has a path: it names a host only", quoteURL(proxy))
		}
		scheme, host = u.Scheme, u.Hostname()
	}
	at := func(port int) string {
		return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/" + DevAccountName + "/"
	}
	return Parsed{
		AccountName: DevAccountName, AccountKey: DevAccountKey, Protocol: "http", EndpointSuffix: "core.windows.net",
		TableEndpoint: at(DevTablePort), QueueEndpoint: at(DevQueuePort), BlobEndpoint: at(DevBlobPort),
	}, nil
}

// CheckEndpoint checks an explicit service endpoint given as setting and
// returns it in normal form: scheme://host[:port][/path]/. It is an
// absolute http(s) URL whose host is a DNS name (labels of letters, digits,
// '-' and '_'), an IPv4 address or a bracketed IPv6 address without a zone;
// a port, if any, is a number from 1 to 65535; the path, if any, is made of
// segments of letters, digits, '-', '.', '_' and '~' (not "." or "..");
// it has no user, query or fragment. The *Error names setting and repeats
// the URL without its query.
func CheckEndpoint(setting, raw string) (string, error) {
	u, err := checkURL(setting, raw)
	if err != nil {
		return "", err
	}
	// A path in error is not repeated: a query typed without its '?'
	// (https://host/sv=…&sig=…) would be.
	shown := strconv.Quote(u.Scheme + "://" + u.Host + "/…")
	path := strings.TrimSuffix(u.Path, "/")
	if path != "" {
		for i, seg := range strings.Split(path[1:], "/") {
			if why := checkSegment(seg); why != "" {
				return "", malformed("%s %s: path segment %d %s", setting, shown, i+1, why)
			}
		}
	}
	if strings.ContainsRune(u.EscapedPath(), '%') {
		return "", malformed("%s %s has a percent-escape in its path (a segment has letters, digits, '-', '.', '_' and '~')", setting, shown)
	}
	return u.Scheme + "://" + u.Host + path + "/", nil
}

// checkURL checks what every URL of a connection string must be: an
// absolute http(s) URL with a valid host and port, no user, no fragment
// and no query. u.Host of the result is normalized (no empty port).
func checkURL(setting, raw string) (*url.URL, error) {
	// What is not an http(s) URL with a host is shown as any other value
	// (show): it may be a key pasted into the wrong setting.
	shown := show(RedactURL(raw))
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		shown = quoteURL(raw)
	}
	if err != nil {
		why := "cannot be read"
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			// The inner error names the bad piece (an escape, a port),
			// never the query, which url.Parse does not decode.
			why += ": " + ue.Err.Error()
		}
		return nil, malformed("%s %s is not a URL: %s", setting, shown, why)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, malformed("%s %s is not an http(s) URL", setting, shown)
	case u.Opaque != "" || u.Host == "":
		return nil, malformed("%s %s has no host", setting, shown)
	case u.User != nil:
		return nil, malformed("%s %s carries a user name or password", setting, shown)
	case strings.ContainsRune(raw, '#'):
		return nil, malformed("%s %s has a fragment", setting, shown)
	case u.RawQuery != "" || u.ForceQuery:
		return nil, malformed("%s %s has a query: a SAS goes in SharedAccessSignature, not in an endpoint", setting, shown)
	}
	if why := checkHost(u.Hostname(), strings.HasPrefix(u.Host, "[")); why != "" {
		return nil, malformed("%s %s: host %s", setting, shown, why)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, malformed("%s %s: port %s is not a number from 1 to 65535", setting, shown, show(port))
		}
	}
	u.Host = strings.TrimSuffix(u.Host, ":")
	return u, nil
}

// checkHost returns why host (without brackets or port) is not a DNS name,
// an IPv4 address or, bracketed, an IPv6 address, or "".
func checkHost(host string, bracketed bool) string {
	if bracketed {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "is not an IPv6 address without a zone"
		}
		return ""
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !a.Is4() {
			return "is an IPv6 address without brackets"
		}
		return ""
	}
	if why := checkDNSName(host, true); why != "" {
		return why
	}
	// A name whose last label is a number is neither a DNS name (no
	// top-level domain is numeric) nor an IPv4 address (010.0.0.1, 1.2.3).
	last := host[strings.LastIndexByte(host, '.')+1:]
	if strings.Trim(last, "0123456789") == "" {
		return "is neither an IPv4 address nor a DNS name"
	}
	return ""
}

// checkDNSName returns why s is not a DNS name of labels of letters,
// digits and '-' (and '_' when underscore, as a container network's host
// names have), or "".
func checkDNSName(s string, underscore bool) string {
	if s == "" {
		return "is empty"
	}
	if len(s) > 253 {
		return fmt.Sprintf("has %d characters, more than a DNS name's 253", len(s))
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" {
			return "has an empty label (two dots in a row, or a dot at an end)"
		}
		if len(label) > 63 {
			return "has a label of more than 63 characters"
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return "has a label that starts or ends with '-'"
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-':
			case c == '_' && underscore:
			default:
				return fmt.Sprintf("has %s, which is not a letter, digit or '-'", quoteByte(c))
			}
		}
	}
	return ""
}

// checkSegment returns why seg is not a plain path segment, or "".
func checkSegment(seg string) string {
	if seg == "" {
		return "is empty (two slashes in a row)"
	}
	if seg == "." || seg == ".." {
		return "is " + strconv.Quote(seg)
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
		default:
			return fmt.Sprintf("has %s (a segment has letters, digits, '-', '.', '_' and '~')", quoteByte(c))
		}
	}
	return ""
}

// CheckDNSSuffix returns why s is not an EndpointSuffix, such as
// core.windows.net: a DNS name (labels of letters, digits and '-' separated
// by dots) without a scheme, port, path or query; or "".
func CheckDNSSuffix(s string) string {
	if why := checkDNSName(s, false); why != "" {
		return "is not a DNS suffix such as core.windows.net: it " + why
	}
	return ""
}

// Limits of a storage account name.
const (
	MinAccountName = 3
	MaxAccountName = 24
)

// CheckAccountName returns why name is not a storage account name (3 to 24
// lower-case letters and digits, the service's rule), or "".
func CheckAccountName(name string) string {
	if n := len(name); n < MinAccountName || n > MaxAccountName {
		return fmt.Sprintf("3 to 24 characters, not %d", n)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return fmt.Sprintf("lower-case letters and digits only, not %s", quoteByte(c))
		}
	}
	return ""
}

// CheckEmulatorAccountName returns why name cannot be the account name of
// a connection string with explicit endpoints, such as an Azurite custom
// account's, or "": it signs requests (SharedKey NAME:…) and names the
// account in the string-to-sign, so it has 1 to 63 ASCII letters, digits,
// '-', '_' and '.'.
func CheckEmulatorAccountName(name string) string {
	if n := len(name); n < 1 || n > 63 {
		return fmt.Sprintf("is not a name of 1 to 63 characters (it has %d)", n)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return fmt.Sprintf("has %s: an account name has letters and digits (an emulator's custom account also '-', '_' and '.')", quoteByte(c))
		}
	}
	return ""
}

// checkSAS returns why sas is not a SharedAccessSignature, without
// repeating it, or "".
func checkSAS(sas string) string {
	q := strings.TrimPrefix(sas, "?")
	if strings.ContainsFunc(q, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '#' }) {
		return "has a space, a control character or '#': it is a query string such as sv=…&sig=…"
	}
	values, err := url.ParseQuery(q)
	if err != nil {
		return "is not a query string such as sv=…&sig=…"
	}
	if values.Get("sig") == "" {
		return "carries no signature (sig)"
	}
	return ""
}

// RedactURL returns raw with its query and fragment replaced by "…" and
// any user information dropped, for an error message: a URL's query may
// carry a SAS, its user information a password.
func RedactURL(raw string) string {
	s := raw
	cut := false
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s, cut = s[:i], true
	}
	// User information sits between "//" and the last '@' of the
	// authority.
	if i := strings.Index(s, "//"); i >= 0 {
		rest := s[i+2:]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			s = s[:i+2] + "…@" + rest[at+1:]
		}
	}
	if cut {
		s += "?…"
	}
	return s
}

// String writes p back as a connection string with explicit endpoints,
// which every Go storage SDK accepts.
func (p Parsed) String() string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("DefaultEndpointsProtocol", p.Protocol)
	add("AccountName", p.AccountName)
	add("AccountKey", p.AccountKey)
	add("SharedAccessSignature", p.SAS)
	add("EndpointSuffix", p.EndpointSuffix)
	add("TableEndpoint", p.TableEndpoint)
	add("QueueEndpoint", p.QueueEndpoint)
	add("BlobEndpoint", p.BlobEndpoint)
	return strings.Join(parts, ";")
}

// Normalize parses s and writes it back with explicit endpoints, for an
// SDK's FromConnectionString constructor of a table client. A string that
// gives no table endpoint (an emulator's custom account with other
// endpoints only) is an *Error: the SDKs would derive one from AccountName
// themselves, unchecked.
func Normalize(s string) (string, error) {
	p, err := Parse(s)
	if err != nil {
		return "", err
	}
	if p.TableEndpoint == "" {
		return "", malformed("no table endpoint: AccountName is not a storage account name (%s) and TableEndpoint is not set", CheckAccountName(p.AccountName))
	}
	return p.String(), nil
}

func malformed(format string, args ...any) *Error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// show quotes a setting's name or value (never a key's or a
// signature's) for a message. A value longer than any name, suffix or
// protocol is shown by its length alone: it may be a secret pasted into
// the wrong setting (an account key has 88 characters, a signature 44),
// and any part of it would give part of the secret away.
func show(s string) string {
	const max = 32
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("of %d bytes (not shown)", len(s))
}

// quoteName quotes a setting's name, as show does.
func quoteName(k string) string { return show(k) }

// quoteURL quotes a URL for a message without its query, fragment and
// user information (RedactURL), and without its path, which holds a query
// typed without its '?' (https://host/sv=…&sig=…), shortened to 160 bytes.
func quoteURL(raw string) string {
	const max = 160
	s := hidePath(RedactURL(raw))
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(strings.ToValidUTF8(s[:max], "")) + "…"
}

// hidePath replaces the path of a URL redacted by RedactURL with "/…",
// keeping a lone "/" and the "?…" that stands for a query.
func hidePath(s string) string {
	i := strings.Index(s, "//")
	if i < 0 {
		return s
	}
	rest := s[i+2:]
	j := strings.IndexByte(rest, '/')
	if j < 0 {
		return s
	}
	path, query := strings.CutSuffix(rest[j:], "?…")
	if path != "/" {
		path = "/…"
	}
	if query {
		path += "?…"
	}
	return s[:i+2] + rest[:j] + path
}

func quoteByte(c byte) string {
	if c < 0x80 {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}
