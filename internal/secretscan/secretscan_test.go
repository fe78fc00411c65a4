package secretscan_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt/keyvault"
	"github.com/tablekit/tablekit/entity/sas"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/internal/connstr"
)

// The secrets: an account key (64 bytes, base64), a SAS signature (32
// bytes, base64, with '+', '/' and '=' that a URL escapes) and a
// password. Each is random-looking, so that 8 of its characters in a row
// appear in an error only if the error repeats it.
var (
	keyBytes = []byte("k3Y\x00\xfe\x17tablekit-account-key-0123456789-abcdefghijklmnopqrstuvw\x81\x92\xa3\xb4")
	key      = base64.StdEncoding.EncodeToString(keyBytes[:64])
	sigBytes = []byte("\xfb\xef\xbe\xfbsignature-of-a-sas-token-\xff\xfe\xfd")
	sig      = base64.StdEncoding.EncodeToString(sigBytes[:32])
	sigQ     = url.QueryEscape(sig)
	password = "pa55w0rd-Zq8Xv3Lk9Tb"
)

// forms are the texts by which an error could repeat a secret.
func forms() map[string][]string {
	f := map[string][]string{}
	for name, s := range map[string]string{"AccountKey": key, "sig": sig, "password": password} {
		f[name] = append(f[name], s, url.QueryEscape(s), url.PathEscape(s),
			base64.StdEncoding.EncodeToString([]byte(s)), hex.EncodeToString([]byte(s)), fmt.Sprintf("%q", s))
	}
	f["AccountKey"] = append(f["AccountKey"], hex.EncodeToString(keyBytes[:64]), base64.URLEncoding.EncodeToString(keyBytes[:64]), fmt.Sprint(keyBytes[:64]))
	f["sig"] = append(f["sig"], hex.EncodeToString(sigBytes[:32]), base64.URLEncoding.EncodeToString(sigBytes[:32]), fmt.Sprint(sigBytes[:32]))
	return f
}

// texts returns every text of err: Error(), %+v, %#v, and %+v and %#v
// of every error it wraps (errors.Unwrap, and Unwrap() []error).
func texts(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		out = append(out, e.Error(), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e))
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, w := range u.Unwrap() {
				walk(w)
			}
		}
	}
	walk(err)
	return out
}

// scan fails t if err repeats a secret in any form, or any 8 characters
// of one in a row.
func scan(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, text := range texts(err) {
		for name, fs := range forms() {
			for _, f := range fs {
				if leaked(text, f) {
					t.Errorf("%s: the error repeats the %s: %s", what, name, text)
					return
				}
			}
		}
	}
}

// leaked reports whether text holds secret or 8 characters of it in a
// row.
func leaked(text, secret string) bool {
	const window = 8
	if len(secret) < window {
		return strings.Contains(text, secret)
	}
	for i := 0; i+window <= len(secret); i++ {
		if strings.Contains(text, secret[i:i+window]) {
			return true
		}
	}
	return false
}

// connectionStrings are malformed in as many ways as we could think of,
// each carrying a key, a signature or a password.
func connectionStrings() []string {
	k := "AccountKey=" + key
	return []string{
		"AccountName=acct;" + k + ";TableEndpoint=ftp://h.example/?sv=1&sig=" + sigQ,
		"AccountName=acct;" + k + ";TableEndpoint=https://acct.table.core.windows.net/?sv=1&sig=" + sigQ,
		"AccountName=acct;" + k + ";TableEndpoint=https://user:" + password + "@h.example/",
		"AccountName=acct;" + k + ";TableEndpoint=https://h.example:bad/?sig=" + sigQ,
		"AccountName=acct;" + k + ";TableEndpoint=http://[::1?sig=" + sigQ,
		"AccountName=acct;" + k + ";TableEndpoint=https://h.example/#" + sig,
		"AccountName=acct;" + k + ";TableEndpoint=https://h.example/sv=1&sig=" + sigQ, // the '?' forgotten
		"AccountName=acct;" + k + ";QueueEndpoint=https://h.example/x y?sig=" + sigQ,
		"AccountName=acct;" + k + ";BlobEndpoint=https://h.example:99999/?sig=" + sigQ,
		"AccountName=acct;" + k + ";TableEndpoint=" + key, // the key in the wrong setting
		"AccountName=acct;" + k + ";TableEndpoint=" + sig,
		"AccountName=acct;" + k + ";" + key, // a key without its name
		"AccountName=acct;" + key,
		"AccountName=" + key + ";" + k,
		"AccountName=" + sig + ";SharedAccessSignature=sv=1&sig=" + sigQ,
		"AccountName=evil.example/x;" + k,
		"AccountName=acct x;" + k + ";SharedAccessSignature=sv=1&sig=" + sigQ,
		"AccountName=acct;" + k + ";EndpointSuffix=core.windows.net/evil?sig=" + sigQ,
		"AccountName=acct;" + k + ";EndpointSuffix=" + key,
		"AccountName=acct;" + k + ";DefaultEndpointsProtocol=" + sig,
		"AccountName=acct;" + k + ";accountkey=" + key,
		k,
		k + ";SharedAccessSignature=sv=1&sig=" + sigQ,
		"AccountName=acct;AccountKey=" + key + "!",
		"AccountName=acct;AccountKey=" + key[:len(key)-3],
		"AccountName=acct;" + k + ";UseDevelopmentStorage=" + sig,
		"UseDevelopmentStorage=true;" + k,
		"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://localhost:8888/?sig=" + sigQ,
		"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://u:" + password + "@proxy.example/",
		"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=" + key,
		"DevelopmentStorageProxyUri=http://p.example/?sig=" + sigQ + ";AccountName=acct;" + k,
		"SharedAccessSignature=sv=1&sig=" + sigQ,
		"AccountName=acct;SharedAccessSignature=sv=1&sig=" + sigQ + "#frag",
		"AccountName=acct;SharedAccessSignature=sv=1&sig=" + sig + " x",
		"AccountName=acct;SharedAccessSignature=%zz&sig=" + sigQ,
		"TableEndpoint=https://h.example/;SharedAccessSignature=sv=1&nosig=" + sigQ,
		"BlobEndpoint=https://h.example/;SharedAccessSignature=sv=1&sig=" + sigQ + ";blobendpoint=https://x.example/",
		"AccountName=acct;" + k + ";TableEndpoint=http://;sig=" + sigQ,
		"\x00AccountName=acct;" + k,
		"AccountName=acct;" + k + "\n;TableEndpoint=http://h.example/\x7f?sig=" + sigQ,
		// A SAS typed into an endpoint's path (its '?' forgotten) beside
		// another fault, which an error shows the URL for.
		"AccountName=acct;SharedAccessSignature=sv=1&sig=" + sigQ + ";TableEndpoint=https://h.example:0/sv=1&sig=" + sigQ,
		"AccountName=acct;" + k + ";TableEndpoint=https://-h.example/sv=1&sig=" + sigQ,
		"AccountName=acct;" + k + ";TableEndpoint=https://h..example:99999/sv=1&sig=" + sigQ,
		"AccountName=acct;" + k + ";TableEndpoint=https://u:" + password + "@h.example/sv=1&sig=" + sigQ,
		"AccountName=acct;" + k + ";QueueEndpoint=ftp://h.example/sv=1&sig=" + sigQ,
		"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://p.example/sv=1&sig=" + sigQ,
		"UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://p.example:8080/sv=1&sig=" + sigQ,
		// A SAS string whose TableEndpoint or EndpointSuffix is refused.
		"AccountName=acct;SharedAccessSignature=sv=1&sig=" + sigQ + ";TableEndpoint=https://h.example:65536/",
		"AccountName=acct;SharedAccessSignature=sv=1&sig=" + sigQ + ";EndpointSuffix=core..windows.net",
	}
}

// sasURLs are URLs of a table or service that carry a token, each
// malformed or of the wrong kind for some constructor.
func sasURLs() []string {
	const se = "&sp=r&se=2030-01-01T00%3A00%3A00Z"
	return []string{
		"https://acct.table.core.windows.net/?sv=2019-02-02&sig=" + sigQ,
		"https://acct.table.core.windows.net/Orders?sv=2019-02-02&sig=" + sigQ + se,
		"ftp://acct.table.core.windows.net/Orders?sv=2019-02-02&sig=" + sigQ + se,
		"https://acct.table.core.windows.net/%zz?sv=2019-02-02&sig=" + sigQ + se,
		"https://u:" + password + "@acct.table.core.windows.net/Orders?sv=2019-02-02&sig=" + sigQ + se,
		"https://acct.table.core.windows.net:0/Orders?sv=2019-02-02&sig=" + sigQ + se,
		"https://acct.table.core.windows.net/Orders?sv=2019-02-02&tn=Other&sig=" + sigQ + se,
		"https://acct.table.core.windows.net/Orders?sv=1&sig=" + sigQ + se,
		"https://acct.table.core.windows.net/Orders?sig=" + sigQ,
		"http://127.0.0.1:10002/devstoreaccount1/Orders?sv=2019-02-02&spr=https&sig=" + sigQ + se,
		"https://acct.table.core.windows.net/Orders?sv=2019-02-02&sig=" + sigQ + se + "#frag",
		"https://acct.table.core.windows.net/Or ders?sv=2019-02-02&sig=" + sigQ + se,
		"https://acct.table.core.windows.net/Orders?sv=2019-02-02&sig=" + sigQ + "&sig=" + sigQ + se,
		"https://acct.table.core.windows.net/Orders?sv=2019-02-02&skoid=x&sig=" + sigQ + se,
		"acct.table.core.windows.net/Orders?sv=2019-02-02&sig=" + sigQ + se,
		"https://acct.table.core.windows.net/Orders?sv=2019-02-02&sig=" + sigQ + ";x" + se,
		"https://acct.table.core.windows.net/Orders?sv=2019-02-02&sig=%zz" + sigQ + se,
		"https://acct.table.core.windows.net/Orders?sv=2019-02-02&sig=" + sig + se, // unescaped: '+' reads as a space
		"https://acct.table.core.windows.net/Orders?sv=2019-02-02&sig=" + sigQ + "&sp=r&se=soon",
		"https://acct.table.core.windows.net/Orders?sv=2019-02-02&ss=b&srt=o&sig=" + sigQ + se,
		"https://acct.blob.core.windows.net/?sv=2019-02-02&ss=bqt&srt=sco&sig=" + sigQ + se,
		"https://a_b.blob.core.windows.net/?sv=2019-02-02&ss=bqt&srt=sco&sig=" + sigQ + se,
		"http://127.0.0.1:10000/devstoreaccount1?sv=2019-02-02&ss=bqt&srt=sco&sig=" + sigQ + se,
		// A host or port that a connection string's endpoint could not
		// have, and a SAS in the path (the '?' forgotten).
		"https://acct.table.core.windows.net:65536/Orders?sv=2019-02-02&sig=" + sigQ + se,
		"https://-acct.table.core.windows.net/Orders?sv=2019-02-02&sig=" + sigQ + se,
		"https://acct..table.core.windows.net/?sv=2019-02-02&ss=t&srt=o&sig=" + sigQ + se,
		"https://acct.table.core.windows.net:0/sv=2019-02-02&sig=" + sigQ + se + "?x=1",
		"https://u:" + password + "@acct.table.core.windows.net:0/sv=2019-02-02&sig=" + sigQ + se + "?x=1",
		"https://-acct.table.core.windows.net/sv=2019-02-02&sig=" + sigQ + se + "#x",
	}
}

// vaultURLs are Key Vault URLs that keyvault.New refuses, each carrying a
// signature or a password.
func vaultURLs() []string {
	return []string{
		"http://myvault.vault.azure.net/?sig=" + sigQ,
		"https://u:" + password + "@myvault.vault.azure.net/",
		"http://u:" + password + "@myvault.vault.azure.net/?sig=" + sigQ,
		"https://myvault.vault.azure.net:0/sv=1&sig=" + sigQ,
		"https://-myvault.vault.azure.net/sv=1&sig=" + sigQ,
		"https://myvault.vault.azure.net/sv=1&sig=" + sigQ,
		"https://myvault.vault.azure.net/#" + sig,
		"ftp://myvault.vault.azure.net/?sig=" + sigQ,
		sig,
		key,
	}
}

type order struct {
	PartitionKey, RowKey string
}

type token struct{}

func (token) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: password}, nil
}

// TestNoSecretInErrors: every constructor and parser of the module that
// takes a credential, fed each malformed input, returns errors that
// repeat no key, signature or password in any form.
func TestNoSecretInErrors(t *testing.T) {
	refused := 0
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			refused++
		}
		scan(t, what, err)
	}
	for _, cs := range connectionStrings() {
		_, err := account.NewFromConnectionString(cs, nil)
		if !errors.Is(err, entity.ErrInvalidConnectionString) {
			t.Errorf("account.NewFromConnectionString(%q): %v, want a refusal matching entity.ErrInvalidConnectionString", cs, err)
		}
		check("account.NewFromConnectionString", err)
		_, err = entity.NewTableFromConnectionString[order](cs, "Orders", nil)
		if !errors.Is(err, entity.ErrInvalidConnectionString) {
			t.Errorf("entity.NewTableFromConnectionString(%q): %v; account refuses it, so must entity, matching entity.ErrInvalidConnectionString", cs, err)
		}
		check("entity.NewTableFromConnectionString", err)
		_, err = sas.NewIssuerFromConnectionString(cs, sas.Config{})
		check("sas.NewIssuerFromConnectionString", err)
		_, err = connstr.Normalize(cs)
		check("connstr.Normalize", err)
	}
	sasKey, err := sas.NewKey("acct", base64.StdEncoding.EncodeToString(keyBytes[:64]))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range sasURLs() {
		_, err := account.New(u, token{}, nil)
		check("account.New", err)
		_, err = account.NewFromSASURL(u, nil)
		check("account.NewFromSASURL", err)
		_, err = entity.NewTableWithCredential[order](u, "Orders", token{}, nil)
		if !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("entity.NewTableWithCredential(%q): %v; a URL with a query is refused, matching entity.ErrInvalid", u, err)
		}
		check("entity.NewTableWithCredential", err)
		_, err = sas.OpenTable[order](u, nil)
		check("sas.OpenTable", err)
		_, err = sas.OpenClient(u, nil)
		check("sas.OpenClient", err)
		_, err = sas.OpenService(u, nil)
		check("sas.OpenService", err)
		_, err = sas.NewIssuer(u, sasKey, sas.Config{})
		check("sas.NewIssuer", err)
		_, err = keyvault.New(&azkeys.Client{}, u, "k", keyvault.Config{})
		check("keyvault.New", err)
		if _, query, ok := strings.Cut(u, "?"); ok {
			_, err = sas.Parse(query)
			check("sas.Parse", err)
		}
	}
	for _, u := range vaultURLs() {
		_, err := keyvault.New(&azkeys.Client{}, u, "k", keyvault.Config{})
		if !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("keyvault.New(%q): %v, want a refusal matching entity.ErrInvalid", u, err)
		}
		check("keyvault.New", err)
	}
	for _, c := range []struct{ name, key string }{
		{"acct", key + "!"}, {"acct", key[:len(key)-3]}, {"evil/x", key}, {"", key}, {key, "!"}, {"acct", sig + "%"},
	} {
		_, err := sas.NewKey(c.name, c.key)
		check("sas.NewKey", err)
	}
	if refused < 150 {
		t.Errorf("only %d inputs refused: the test feeds less than it should", refused)
	}
}

// TestNoSecretInEnvironmentErrors: integration.Start, which reads a
// connection string or account URL from the environment, wraps the refusal without repeating the secret. Only inputs that
// account refuses are given, so that nothing is sent.
func TestNoSecretInEnvironmentErrors(t *testing.T) {
	ctx := t.Context()
	for _, cs := range connectionStrings() {
		if _, err := account.NewFromConnectionString(cs, nil); err == nil {
			continue
		}
		if strings.ContainsRune(cs, 0) {
			continue // an environment variable cannot hold it
		}
		t.Setenv(integration.EnvAccountURL, "")
		t.Setenv(integration.EnvConnectionString, cs)
		env, err := integration.Start(ctx)
		if err == nil {
			_ = env.Close()
			t.Errorf("integration.Start accepted %q", cs)
		}
		scan(t, "integration.Start with "+integration.EnvConnectionString, err)
	}
	t.Setenv(integration.EnvConnectionString, "")
	for _, u := range sasURLs() {
		if _, err := account.New(u, token{}, nil); err == nil {
			continue
		}
		t.Setenv(integration.EnvAccountURL, u)
		env, err := integration.Start(ctx)
		if err == nil {
			_ = env.Close()
			t.Errorf("integration.Start accepted %q", u)
		}
		scan(t, "integration.Start with "+integration.EnvAccountURL, err)
	}
}
