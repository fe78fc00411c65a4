package sas

import (
	"errors"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/connstr"
)

// OpenTable returns a typed view of the table a SAS URL names, for a client
// that holds only the token: https://ACCOUNT.table.core.windows.net/TABLE?<token>
// (or an emulator's http://127.0.0.1:10002/ACCOUNT/TABLE?<token>). The token
// may be a table SAS (Issuer.Grant, Issuer.TableURL, or any SDK's) or an
// account SAS with the table's name put in the path.
//
// The URL and token are checked before any request: a URL whose scheme,
// host, port (1 to 65535) or path a connection string's TableEndpoint could
// not have (NewIssuer), a malformed token, a
// table SAS made for another table, or an account SAS that does not reach
// entities is a *FieldError. What the token does not allow is refused by
// the service, as an error that matches none of entity's sentinels: an
// *entity.ServiceError with StatusCode 403 and the service's code
// (AuthorizationPermissionMismatch, AuthenticationFailed, …).
//
// opts (nil means aztables' defaults) gets tablekit's pipeline policies,
// as entity's constructors give them (entity.ClientOptions: a write whose
// reply was lost is settled, not misreported, and every key is
// addressed); the caller's retries, logging, transport and policies are
// kept (TestOpenTableSettlesLostReplies). Options aztables cannot build a
// client with are an *entity.ConfigError naming FieldClientOptions.
func OpenTable[T any](sasURL string, opts *aztables.ClientOptions) (*entity.Table[T], error) {
	svc, table, err := openTableURL(sasURL, opts)
	if err != nil {
		return nil, err
	}
	return entity.NewTableFromService[T](svc, table)
}

// OpenClient returns the aztables client of the table a SAS URL names,
// checked as OpenTable checks it, for a view of the table other than
// entity's: resolver.NewTable(client, schema) reads a table of several
// entity types through a resolver schema. Package sas does not import
// resolver; resolver builds on what sas returns. opts gets tablekit's
// pipeline policies, as for OpenTable.
func OpenClient(sasURL string, opts *aztables.ClientOptions) (*aztables.Client, error) {
	svc, table, err := openTableURL(sasURL, opts)
	if err != nil {
		return nil, err
	}
	return svc.NewClient(table), nil
}

// OpenService returns a service client for a SAS URL of the service itself
// (Issuer.AccountURL), with which entity.NewTableFromService opens any table
// the token reaches. opts gets tablekit's pipeline policies, as for
// OpenTable.
func OpenService(sasURL string, opts *aztables.ClientOptions) (*aztables.ServiceClient, error) {
	u, tok, err := parseSASURL(sasURL)
	if err != nil {
		return nil, err
	}
	if tok.Kind == AccountToken && !strings.Contains(tok.Services, "t") {
		return nil, invalid("ss", tok.Services, "the account SAS does not include the Table service (t)")
	}
	return newServiceClient(u, strings.TrimSuffix(u.Path, "/"), opts)
}

// openTableURL checks a table SAS URL and returns a service client and the
// table name.
func openTableURL(sasURL string, opts *aztables.ClientOptions) (*aztables.ServiceClient, string, error) {
	u, tok, err := parseSASURL(sasURL)
	if err != nil {
		return nil, "", err
	}
	path := strings.TrimSuffix(u.Path, "/")
	cut := strings.LastIndexByte(path, '/')
	prefix, table := path[:max(cut, 0)], path[cut+1:]
	if err := checkTableName("URL", table); err != nil {
		return nil, "", &FieldError{Field: "URL", Value: quote(u.Path), Reason: "the path does not end with a table name", Err: err}
	}
	switch {
	case tok.Kind == TableToken && tok.Table != "" && !strings.EqualFold(tok.Table, table):
		return nil, "", invalid("tn", tok.Table, "the token is for another table than the URL's "+quote(table))
	case tok.Kind == AccountToken && !strings.Contains(tok.Services, "t"):
		return nil, "", invalid("ss", tok.Services, "the account SAS does not include the Table service (t)")
	case tok.Kind == AccountToken && tok.ResourceTypes&Object == 0:
		return nil, "", invalid("srt", tok.ResourceTypes.String(), "the account SAS does not reach entities (o)")
	}
	svc, err := newServiceClient(u, prefix, opts)
	return svc, table, err
}

// parseSASURL checks the URL's form and parses its token.
func parseSASURL(sasURL string) (*url.URL, Token, error) {
	u, err := url.Parse(sasURL)
	if err != nil {
		return nil, Token{}, &FieldError{Field: "URL", Reason: "not a URL", Err: urlCause(err)}
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, Token{}, invalid("URL", u.Scheme, "the scheme must be https (or http for an emulator)")
	case u.Host == "":
		return nil, Token{}, invalid("URL", "", "the URL has no host")
	case u.User != nil || u.Fragment != "":
		return nil, Token{}, invalid("URL", "", "the URL must not carry user information or a fragment")
	case u.RawQuery == "":
		return nil, Token{}, invalid("URL", "", "the URL carries no SAS token (its query string is empty)")
	}
	base, _, _ := strings.Cut(sasURL, "?")
	if _, err := checkEndpoint(base); err != nil {
		return nil, Token{}, err
	}
	tok, err := Parse(u.RawQuery)
	if err != nil {
		return nil, Token{}, err
	}
	if tok.Protocol == HTTPS && u.Scheme != "https" {
		return nil, Token{}, invalid("spr", string(tok.Protocol), "the token allows HTTPS only and the URL is http")
	}
	return u, tok, nil
}

// checkEndpoint checks a service or table URL without its query as a
// connection string's endpoint is checked (connstr.CheckEndpoint): a DNS
// name, IPv4 address or bracketed IPv6 address, a port (if any) from 1 to
// 65535, a path of plain segments. It returns the URL in normal form,
// ending with '/'. The error repeats the URL's scheme and host only.
func checkEndpoint(raw string) (string, error) {
	endpoint, err := connstr.CheckEndpoint("URL", raw)
	if err != nil {
		reason := err.Error()
		if ce := (*connstr.Error)(nil); errors.As(err, &ce) {
			reason = strings.TrimPrefix(ce.Reason, "URL ")
		}
		return "", &FieldError{Field: "URL", Reason: reason}
	}
	return endpoint, nil
}

// urlCause returns the cause of url.Parse's error without the URL, which
// *url.Error repeats whole, token included.
func urlCause(err error) error {
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// newServiceClient builds a client for the service at u's scheme and host
// plus path prefix, carrying u's token on every request, with opts and
// tablekit's pipeline policies (entity.ClientOptions).
func newServiceClient(u *url.URL, prefix string, opts *aztables.ClientOptions) (*aztables.ServiceClient, error) {
	endpoint := u.Scheme + "://" + u.Host + prefix + "/?" + u.RawQuery
	svc, err := aztables.NewServiceClientWithNoCredential(endpoint, entity.ClientOptions(opts))
	if err != nil {
		// azcore's error names no URL, so it repeats no token.
		return nil, &entity.ConfigError{Field: entity.FieldClientOptions, Reason: "aztables cannot build a client with them: " + err.Error()}
	}
	return svc, nil
}
