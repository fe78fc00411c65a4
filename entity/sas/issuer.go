package sas

import (
	"net/url"
	"time"

	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/connstr"
)

// Config tunes an Issuer.
type Config struct {
	// TTL is how long the tokens last when TableSAS.Expiry is not set;
	// 0 means 1 hour. Keep it short: a token without a stored access policy
	// can only be revoked by rotating the account key.
	TTL time.Duration
	// Protocol of the tokens when TableSAS.Protocol is not set; "" means
	// HTTPS for an https endpoint, and both for an http one (an emulator).
	Protocol Protocol
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

func (c Config) withDefaults(scheme string) Config {
	if c.TTL == 0 {
		c.TTL = time.Hour
	}
	if c.Protocol == "" && scheme == "https" {
		c.Protocol = HTTPS
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Issuer makes SAS URLs for the tables of one account: it runs where the
// account key lives (design guide §7) and hands each client a URL that
// OpenTable turns into a table, limited in time, permissions and keys.
type Issuer struct {
	endpoint string // the table service endpoint, ending in '/'
	key      *Key
	cfg      Config
}

// NewIssuer returns an Issuer for the table service at serviceURL
// (https://ACCOUNT.table.core.windows.net/, or an emulator's
// http://127.0.0.1:10002/ACCOUNT/) signing with key.
//
// serviceURL is checked as a connection string's TableEndpoint is: http(s),
// a host that is a DNS name, an IPv4 address or a bracketed IPv6 address, a
// port (if any) from 1 to 65535, a path (if any) of plain segments, and no
// user, query or fragment. Anything else is a *FieldError for "URL" that
// shows the URL without its query and user information.
func NewIssuer(serviceURL string, key *Key, cfg Config) (*Issuer, error) {
	if key == nil {
		return nil, invalid("Key", "", "an Issuer needs the account key")
	}
	u, err := url.Parse(serviceURL)
	switch {
	case err != nil:
		return nil, &FieldError{Field: "URL", Reason: "not a URL", Err: urlCause(err)}
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "", u.RawQuery != "", u.Fragment != "", u.User != nil:
		// The URL is shown as its scheme and host: its query, user and
		// path (a query typed without its '?') may hold a token or a
		// password.
		return nil, invalid("URL", u.Scheme+"://"+u.Host+"/…", "the service URL is scheme://host[/path]/, with no query, user or fragment")
	}
	endpoint, err := checkEndpoint(serviceURL)
	if err != nil {
		return nil, err
	}
	if cfg.TTL < 0 {
		return nil, invalid("TTL", cfg.TTL.String(), "the time to live must not be negative")
	}
	if err := cfg.Protocol.check(); err != nil {
		return nil, err
	}
	if cfg.Protocol == HTTPS && u.Scheme != "https" {
		return nil, invalid("spr", string(cfg.Protocol), "HTTPS-only tokens for an http endpoint would be refused")
	}
	return &Issuer{endpoint: endpoint, key: key, cfg: cfg.withDefaults(u.Scheme)}, nil
}

// NewIssuerFromConnectionString returns an Issuer for the account of a
// connection string that carries its key (AccountName and AccountKey, with
// TableEndpoint or DefaultEndpointsProtocol and EndpointSuffix), such as
// the portal's "Access keys" one, or UseDevelopmentStorage=true for a local
// Azurite. A connection string holding a SAS instead of a key cannot sign.
func NewIssuerFromConnectionString(connectionString string, cfg Config) (*Issuer, error) {
	cs, err := connstr.Parse(connectionString)
	if err != nil {
		return nil, &FieldError{Field: "connection string", Reason: "cannot be read", Err: err}
	}
	if cs.AccountKey == "" {
		return nil, invalid("connection string", "", "no AccountKey: only an account key can sign tokens")
	}
	key, err := NewKey(cs.AccountName, cs.AccountKey)
	if err != nil {
		return nil, err
	}
	return NewIssuer(cs.TableEndpoint, key, cfg)
}

// Endpoint returns the table service endpoint the URLs point at.
func (i *Issuer) Endpoint() string {
	if i == nil {
		return ""
	}
	return i.endpoint
}

// Grant returns a URL for the design guide's scenario: the holder may do
// perms to the entities of table inside r, and nothing else, for the
// Issuer's TTL. r must not be the whole table: Partition(userID) gives one
// user their own partition, Rows or RowPrefix their own rows of a shared
// partition. OpenTable opens the URL.
func (i *Issuer) Grant(table string, r KeyRange, perms Permissions) (string, error) {
	if err := i.ok(); err != nil {
		return "", err
	}
	if r.IsZero() {
		return "", invalid("Range", "", "Grant limits a token to a key range; use TableURL for a token over the whole table")
	}
	if perms == 0 {
		return "", invalid("sp", "", "Grant needs at least one permission")
	}
	return i.TableURL(TableSAS{Table: table, Permissions: perms, Range: r})
}

// TableURL signs v and returns the table's URL carrying the token. An
// Expiry left zero (without a Policy) is now plus the TTL, and a Protocol
// left empty is the Issuer's.
func (i *Issuer) TableURL(v TableSAS) (string, error) {
	if err := i.ok(); err != nil {
		return "", err
	}
	if v.Expiry.IsZero() && v.Policy == "" {
		v.Expiry = i.cfg.Now().Add(i.cfg.TTL)
	}
	if v.Protocol == "" {
		v.Protocol = i.cfg.Protocol
	}
	tok, err := i.key.SignTable(v)
	if err != nil {
		return "", err
	}
	return i.endpoint + v.Table + "?" + tok.Query(), nil
}

// AccountURL signs v as an account SAS and returns the service's URL
// carrying it, for OpenService; an Expiry left zero is now plus the TTL.
// Append a table name to the path (before the '?') for OpenTable.
func (i *Issuer) AccountURL(v AccountSAS) (string, error) {
	if err := i.ok(); err != nil {
		return "", err
	}
	if v.Expiry.IsZero() {
		v.Expiry = i.cfg.Now().Add(i.cfg.TTL)
	}
	if v.Protocol == "" {
		v.Protocol = i.cfg.Protocol
	}
	tok, err := i.key.SignAccount(v)
	if err != nil {
		return "", err
	}
	return i.endpoint + "?" + tok.Query(), nil
}

// ok refuses a nil or zero Issuer, which NewIssuer never returns.
func (i *Issuer) ok() error {
	if i == nil || i.key == nil {
		return invalid("Issuer", "", argerr.ZeroValue)
	}
	return nil
}
