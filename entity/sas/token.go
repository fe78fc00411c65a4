package sas

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/internal/tablename"
)

// Version is the signed version (sv) of the tokens made here: the version
// of the Table service REST API that aztables and every Azure table SDK
// speak. The table string-to-sign has had the same form from 2015-04-05 on.
const Version = "2019-02-02"

// minVersion is the oldest signed version whose string-to-sign this package
// knows: the one that added sip and spr and the service name in the
// canonical resource.
const minVersion = "2015-04-05"

// Kind tells the two kinds of token apart.
type Kind uint8

const (
	// TableToken is a service SAS for one table (tn), with table
	// permissions and an optional key range or stored access policy.
	TableToken Kind = iota + 1
	// AccountToken is an account SAS (ss, srt): any table of the account,
	// at the levels its resource types name.
	AccountToken
)

func (k Kind) String() string {
	switch k {
	case TableToken:
		return "table SAS"
	case AccountToken:
		return "account SAS"
	}
	return "unknown SAS"
}

// Token is a shared access signature: the fields of its query string, typed.
// Tokens come from Key.SignTable and Key.SignAccount, or from Parse.
//
// A Token is not a secret-free value: whoever holds its Query can use it
// until it expires. Its String method therefore leaves the signature out.
type Token struct {
	Kind    Kind
	Version string // sv

	Table       string      // tn: the table a table token was made for (may be empty in tokens made elsewhere)
	Permissions Permissions // sp of a table token
	Policy      string      // si: the stored access policy of a table token
	Range       KeyRange    // spk, srk, epk, erk

	Services           string             // ss of an account token, as given, such as "t" or "bqtf"
	ResourceTypes      ResourceTypes      // srt
	AccountPermissions AccountPermissions // sp of an account token

	Start    time.Time // st; zero when absent: valid as soon as the service receives a request
	Expiry   time.Time // se; zero only for a table token whose policy sets it
	IP       IPRange   // sip
	Protocol Protocol  // spr; "" is the service's default, https or http
	// Signature is sig, the base64 HMAC-SHA256 of the string-to-sign
	// under the account key.
	Signature string

	// The time and IP fields exactly as they were signed: a token made
	// elsewhere may write them in another valid form than this package.
	st, se, sip string
}

// String describes the token without its signature, for logs.
func (t Token) String() string {
	var b strings.Builder
	b.WriteString(t.Kind.String())
	switch t.Kind {
	case TableToken:
		b.WriteString(" for table ")
		b.WriteString(quote(t.Table))
		b.WriteString(" sp=")
		b.WriteString(t.Permissions.String())
		if t.Policy != "" {
			b.WriteString(" si=")
			b.WriteString(quote(t.Policy))
		}
		if !t.Range.IsZero() {
			b.WriteString(" range ")
			b.WriteString(t.Range.String())
		}
	case AccountToken:
		b.WriteString(" ss=" + t.Services + " srt=" + t.ResourceTypes.String() + " sp=" + t.AccountPermissions.String())
	}
	if t.st != "" {
		b.WriteString(" st=" + t.st)
	}
	if t.se != "" {
		b.WriteString(" se=" + t.se)
	}
	if t.sip != "" {
		b.WriteString(" sip=" + t.sip)
	}
	if t.Protocol != "" {
		b.WriteString(" spr=" + string(t.Protocol))
	}
	return b.String()
}

// Query returns the token as the query string of a URL, every field
// percent-encoded (RFC 3986 unreserved characters only, so that no reader
// can take a '+' for a space). Every signed field is present: the key range
// too, which aztables v1.4.1 signs but leaves out.
func (t Token) Query() string {
	var b strings.Builder
	add := func(name, value string) {
		if value == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(escape(value))
	}
	add("sv", t.Version)
	if t.Kind == AccountToken {
		add("ss", t.Services)
		add("srt", t.ResourceTypes.String())
		add("sp", t.AccountPermissions.String())
	} else {
		add("tn", t.Table)
		add("sp", t.Permissions.String())
	}
	add("st", t.st)
	add("se", t.se)
	add("sip", t.sip)
	add("spr", string(t.Protocol))
	add("si", t.Policy)
	add("spk", t.Range.StartPK)
	add("srk", t.Range.StartRK)
	add("epk", t.Range.EndPK)
	add("erk", t.Range.EndRK)
	add("sig", t.Signature)
	return b.String()
}

// escape percent-encodes everything but RFC 3986's unreserved characters.
func escape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// tableFields and accountFields are the query parameters each kind of token
// may carry.
var (
	tableFields   = []string{"sv", "tn", "sp", "st", "se", "sip", "spr", "si", "spk", "srk", "epk", "erk", "sig"}
	accountFields = []string{"sv", "ss", "srt", "sp", "st", "se", "sip", "spr", "sig"}
)

// Parse reads a table or account SAS from a query string (with or without
// a leading '?'), such as a token made by another SDK, the portal or
// Key.SignTable. It checks every field's form and the rules the service
// applies to their combination, but not the signature, which needs the
// account key. A user delegation SAS, or any field a table or account SAS
// cannot carry, is refused.
func Parse(query string) (Token, error) {
	query = strings.TrimPrefix(query, "?")
	values, err := url.ParseQuery(query)
	if err != nil {
		return Token{}, &FieldError{Field: "query", Reason: "not a query string", Err: err}
	}
	get := func(name string) string {
		if v := values[name]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	var t Token
	allowed := tableFields
	t.Kind = TableToken
	if _, ok := values["ss"]; ok {
		t.Kind, allowed = AccountToken, accountFields
	} else if _, ok := values["srt"]; ok {
		t.Kind, allowed = AccountToken, accountFields
	}
	for name, v := range values {
		switch {
		case !slices.Contains(allowed, name):
			reason := "not a field of a " + t.Kind.String()
			if strings.HasPrefix(name, "sk") || name == "saoid" || name == "suoid" || name == "scid" {
				reason = "a user delegation SAS, which the Table service's SDKs cannot make or use; use a Microsoft Entra credential instead"
			}
			return Token{}, invalid(name, "", reason)
		case len(v) > 1:
			return Token{}, invalid(name, "", "the field is given more than once")
		case v[0] == "":
			return Token{}, invalid(name, "", "the field is empty")
		}
	}

	if t.Version = get("sv"); t.Version == "" {
		return Token{}, invalid("sv", "", "the signed version is required")
	}
	if v, err := time.Parse("2006-01-02", t.Version); err != nil || v.Format("2006-01-02") < minVersion {
		return Token{}, invalid("sv", t.Version, "not a version of "+minVersion+" or later")
	}
	if t.Signature = get("sig"); t.Signature == "" {
		return Token{}, invalid("sig", "", "the signature is required")
	}
	if raw, err := base64.StdEncoding.DecodeString(t.Signature); err != nil || len(raw) != 32 {
		return Token{}, invalid("sig", "", "not the base64 of an HMAC-SHA256")
	}
	t.st, t.se, t.sip = get("st"), get("se"), get("sip")
	if t.st != "" {
		if t.Start, err = parseTime("st", t.st); err != nil {
			return Token{}, err
		}
	}
	if t.se != "" {
		if t.Expiry, err = parseTime("se", t.se); err != nil {
			return Token{}, err
		}
	}
	if t.st != "" && t.se != "" && !t.Start.Before(t.Expiry) {
		return Token{}, invalid("se", t.se, "the expiry is not after the start "+t.st)
	}
	if t.IP, err = ParseIPRange(t.sip); err != nil {
		return Token{}, err
	}
	t.Protocol = Protocol(get("spr"))
	if err := t.Protocol.check(); err != nil {
		return Token{}, err
	}
	sp := get("sp")
	if t.Kind == AccountToken {
		return t, t.parseAccount(get, sp)
	}
	return t, t.parseTable(get, sp)
}

func (t *Token) parseTable(get func(string) string, sp string) error {
	t.Table, t.Policy = get("tn"), get("si")
	if t.Table != "" {
		if err := checkTableName("tn", t.Table); err != nil {
			return err
		}
	}
	if err := checkPolicy(t.Policy); err != nil {
		return err
	}
	bits, err := parseLetters("sp", sp, tableLetters)
	if err != nil {
		return err
	}
	t.Permissions = Permissions(bits)
	if t.Policy == "" && (sp == "" || t.se == "") {
		return invalid("sp", sp, "a table SAS without a stored access policy (si) needs permissions (sp) and an expiry (se)")
	}
	t.Range = KeyRange{StartPK: get("spk"), StartRK: get("srk"), EndPK: get("epk"), EndRK: get("erk")}
	return t.Range.check()
}

func (t *Token) parseAccount(get func(string) string, sp string) error {
	t.Services = get("ss")
	if t.Services == "" {
		return invalid("ss", "", "an account SAS needs its services (ss)")
	}
	seen := ""
	for _, c := range t.Services {
		if !strings.ContainsRune("bqtf", c) || strings.ContainsRune(seen, c) {
			return invalid("ss", t.Services, `the services are letters of "bqtf", each at most once`)
		}
		seen += string(c)
	}
	rt, err := parseLetters("srt", get("srt"), resourceLetters)
	if err != nil {
		return err
	}
	if t.ResourceTypes = ResourceTypes(rt); rt == 0 {
		return invalid("srt", "", "an account SAS needs its resource types (srt)")
	}
	// An account SAS may carry letters for other services (p for queues,
	// x, y, t, f, i in later versions for blobs): only those meaningful to
	// tables are known here.
	perms, err := parseLetters("sp", sp, accountLetters)
	if err != nil {
		return err
	}
	if t.AccountPermissions = AccountPermissions(perms); perms == 0 {
		return invalid("sp", "", "an account SAS needs permissions (sp)")
	}
	if t.se == "" {
		return invalid("se", "", "an account SAS needs an expiry (se)")
	}
	return nil
}

// checkTableName applies the service's rule for table names.
func checkTableName(field, name string) error {
	if reason := tablename.Check(name); reason != "" {
		return invalid(field, name, reason)
	}
	return nil
}

// checkPolicy checks a stored access policy id: at most 64 characters and,
// like every field of the string-to-sign, no control character, so that no
// value can stand for the next line.
func checkPolicy(id string) error {
	if !utf8.ValidString(id) {
		return invalid("si", id, "a stored access policy id must be valid UTF-8")
	}
	if utf8.RuneCountInString(id) > 64 {
		return invalid("si", id, "a stored access policy id has at most 64 characters")
	}
	if strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return invalid("si", id, "a stored access policy id cannot contain control characters")
	}
	return nil
}
