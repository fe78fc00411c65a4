package sas

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"
)

// Key is a storage account's name and shared key: what signs tokens. Keep
// it where the account key lives (a server), never in the clients that
// receive the tokens. Its String method never shows the key.
type Key struct {
	account string
	secret  []byte
}

// NewKey returns the signing key of the account: accountKey is the base64
// key the portal shows ("Access keys"), or integration.AzuriteAccountKey.
func NewKey(accountName, accountKey string) (*Key, error) {
	if accountName == "" || strings.ContainsFunc(accountName, func(r rune) bool { return r <= ' ' || r == '/' || r == 0x7f }) {
		return nil, invalid("AccountName", accountName, "an account name is not empty and has no spaces, slashes or control characters")
	}
	secret, err := base64.StdEncoding.DecodeString(accountKey)
	if err != nil || len(secret) == 0 {
		return nil, &FieldError{Field: "AccountKey", Reason: "not a base64 account key", Err: err}
	}
	return &Key{account: accountName, secret: secret}, nil
}

// AccountName returns the name of the account the key belongs to.
func (k *Key) AccountName() string { return k.account }

// String names the account and hides the key.
func (k *Key) String() string { return "sas.Key{" + k.account + "}" }

// GoString hides the key from %#v too.
func (k *Key) GoString() string { return k.String() }

// TableSAS is what a table SAS grants (a service SAS for one table, design
// guide §7): the values Key.SignTable signs.
type TableSAS struct {
	// Table is the table's name; the token opens that table only.
	Table string
	// Permissions is what the holder may do; 0 only with a Policy that sets
	// them.
	Permissions Permissions
	// Start is when the token becomes valid; zero means as soon as the
	// service receives a request. Times are signed in UTC, to the second
	// (a fraction is dropped).
	Start time.Time
	// Expiry is when the token stops working; zero only with a Policy that
	// sets it.
	Expiry time.Time
	// IP limits the addresses requests may come from; zero means any.
	IP IPRange
	// Protocol limits the schemes; "" means the service's default, HTTPS or
	// HTTP. Use HTTPS for tokens that cross a network.
	Protocol Protocol
	// Policy is the id of a stored access policy of the table (si), set with
	// aztables.Client.SetAccessPolicy: the token takes the policy's start,
	// expiry and permissions where its own are empty, and deleting or
	// changing the policy revokes every token that names it.
	Policy string
	// Range limits the entities the token reaches; zero means the whole
	// table.
	Range KeyRange
}

// AccountSAS is what an account SAS for the Table service grants: every
// table of the account, at the levels ResourceTypes names. The REST
// reference does not allow stored access policies or key ranges in an
// account SAS.
type AccountSAS struct {
	Permissions   AccountPermissions
	ResourceTypes ResourceTypes
	Start         time.Time // zero: valid as soon as the service receives a request
	Expiry        time.Time // required
	IP            IPRange
	Protocol      Protocol
}

// SignTable checks v and signs it. Every field is checked before signing
// and a *FieldError names the first one that is wrong. The token carries
// every field it signs, the key range included, and its table name as
// given.
func (k *Key) SignTable(v TableSAS) (Token, error) {
	if err := checkTableName("Table", v.Table); err != nil {
		return Token{}, err
	}
	if v.Permissions&^ReadWrite != 0 {
		return Token{}, invalid("sp", "", "unknown permission bits")
	}
	if v.Policy == "" && (v.Permissions == 0 || v.Expiry.IsZero()) {
		return Token{}, invalid("sp", v.Permissions.String(), "a table SAS without a stored access policy needs Permissions and an Expiry")
	}
	if err := checkPolicy(v.Policy); err != nil {
		return Token{}, err
	}
	if err := v.Range.check(); err != nil {
		return Token{}, err
	}
	t := Token{
		Kind: TableToken, Version: Version, Table: v.Table, Permissions: v.Permissions,
		Policy: v.Policy, Range: v.Range, IP: v.IP, Protocol: v.Protocol,
	}
	if err := t.setCommon(v.Start, v.Expiry); err != nil {
		return Token{}, err
	}
	t.Signature = k.sign(t)
	return t, nil
}

// SignAccount checks v and signs it as an account SAS for the Table service
// (ss=t).
func (k *Key) SignAccount(v AccountSAS) (Token, error) {
	switch {
	case v.Permissions == 0 || v.Permissions >= 1<<len(accountLetters):
		return Token{}, invalid("sp", v.Permissions.String(), "an account SAS needs known permissions")
	case v.ResourceTypes == 0 || v.ResourceTypes >= 1<<len(resourceLetters):
		return Token{}, invalid("srt", v.ResourceTypes.String(), "an account SAS needs known resource types")
	case v.Expiry.IsZero():
		return Token{}, invalid("se", "", "an account SAS needs an Expiry")
	}
	t := Token{
		Kind: AccountToken, Version: Version, Services: "t", ResourceTypes: v.ResourceTypes,
		AccountPermissions: v.Permissions, IP: v.IP, Protocol: v.Protocol,
	}
	if err := t.setCommon(v.Start, v.Expiry); err != nil {
		return Token{}, err
	}
	t.Signature = k.sign(t)
	return t, nil
}

// setCommon checks and stores the fields both kinds share.
func (t *Token) setCommon(start, expiry time.Time) error {
	if err := t.IP.check(); err != nil {
		return err
	}
	if err := t.Protocol.check(); err != nil {
		return err
	}
	var err error
	if t.st, err = formatTime("st", start); err != nil {
		return err
	}
	if t.se, err = formatTime("se", expiry); err != nil {
		return err
	}
	// The token holds the times as signed, to the second.
	if t.st != "" {
		t.Start, _ = time.Parse(timeLayout, t.st)
	}
	if t.se != "" {
		t.Expiry, _ = time.Parse(timeLayout, t.se)
	}
	if t.st != "" && t.se != "" && !t.Start.Before(t.Expiry) {
		return invalid("se", t.se, "the expiry is not after the start "+t.st)
	}
	t.sip = t.IP.String()
	return nil
}

// sign returns the signature of t under k.
func (k *Key) sign(t Token) string {
	m := hmac.New(sha256.New, k.secret)
	m.Write([]byte(stringToSign(k.account, t)))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// stringToSign is the string the service signs, as the REST reference
// ("Create a service SAS", "Create an account SAS") gives it for versions
// 2015-04-05 and later. Every optional field is an empty line when absent.
// No field can contain a newline (keys and policy ids forbid control
// characters; the others are typed), so no value can pass for another
// field.
//
// Table (service) SAS:
//
//	sp \n st \n se \n /table/<account>/<table in lower case> \n si \n sip \n spr \n sv \n spk \n srk \n epk \n erk
//
// Account SAS:
//
//	<account> \n sp \n ss \n srt \n st \n se \n sip \n spr \n sv \n
func stringToSign(account string, t Token) string {
	if t.Kind == AccountToken {
		return strings.Join([]string{
			account, t.AccountPermissions.String(), t.Services, t.ResourceTypes.String(),
			t.st, t.se, t.sip, string(t.Protocol), t.Version, "",
		}, "\n")
	}
	return strings.Join([]string{
		t.Permissions.String(), t.st, t.se,
		"/table/" + account + "/" + strings.ToLower(t.Table),
		t.Policy, t.sip, string(t.Protocol), t.Version,
		t.Range.StartPK, t.Range.StartRK, t.Range.EndPK, t.Range.EndRK,
	}, "\n")
}
