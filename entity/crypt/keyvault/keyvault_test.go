package keyvault_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/entity/crypt/keyvault"
)

const vaultURL = "https://myvault.vault.azure.net/"

// staticToken is a credential that hands out one token.
type staticToken struct{}

func (staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "test-token", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// exchange is one recorded request and its response (testdata/recorded.json).
type exchange struct {
	Comment  string          `json:"comment"`
	Method   string          `json:"method"`
	Path     string          `json:"path"`
	Request  json.RawMessage `json:"request"`
	Status   int             `json:"status"`
	Response json.RawMessage `json:"response"`
}

// replay is a policy.Transporter that answers from recorded exchanges, as
// Key Vault does: an unauthenticated first request gets the 401 challenge
// that tells the client which tenant and resource to get a token for.
type replay struct {
	t         *testing.T
	exchanges []exchange
	mu        sync.Mutex
	served    []string // comments of the exchanges served
}

func (r *replay) Do(req *http.Request) (*http.Response, error) {
	r.t.Helper()
	if req.Header.Get("Authorization") == "" {
		h := http.Header{}
		h.Set("WWW-Authenticate", `Bearer authorization="https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47", resource="https://vault.azure.net"`)
		return &http.Response{StatusCode: http.StatusUnauthorized, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
	}
	if req.Header.Get("Authorization") != "Bearer test-token" || req.URL.Query().Get("api-version") == "" {
		r.t.Errorf("request without the token or api-version: %v %v", req.Header, req.URL)
	}
	body, _ := io.ReadAll(req.Body)
	var got any
	_ = json.Unmarshal(body, &got)
	for _, x := range r.exchanges {
		var want any
		_ = json.Unmarshal(x.Request, &want)
		if x.Method == req.Method && x.Path == req.URL.Path && reflect.DeepEqual(got, want) {
			r.mu.Lock()
			r.served = append(r.served, x.Comment)
			r.mu.Unlock()
			h := http.Header{}
			h.Set("Content-Type", "application/json; charset=utf-8")
			return &http.Response{StatusCode: x.Status, Header: h, Body: io.NopCloser(bytes.NewReader(x.Response)), Request: req}, nil
		}
	}
	r.t.Errorf("unrecorded request %s %s %s", req.Method, req.URL.Path, body)
	return nil, errors.New("unrecorded request")
}

func recorded(t *testing.T) *replay {
	b, err := os.ReadFile("testdata/recorded.json")
	if err != nil {
		t.Fatal(err)
	}
	r := &replay{t: t}
	if err := json.Unmarshal(b, &r.exchanges); err != nil {
		t.Fatal(err)
	}
	return r
}

func newKey(t *testing.T, transport policy.Transporter, cfg keyvault.Config) *keyvault.Key {
	t.Helper()
	opts := &azkeys.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: transport, Retry: policy.RetryOptions{MaxRetries: -1}}}
	client, err := azkeys.NewClient(vaultURL, staticToken{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	k, err := keyvault.New(client, vaultURL, "tablekit-kek", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func b64u(t *testing.T, s string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecorded drives the adapter through recorded Key Vault exchanges.
func TestRecorded(t *testing.T) {
	ctx := t.Context()
	rec := recorded(t)
	k := newKey(t, rec, keyvault.Config{})
	var wrapResp struct{ Kid, Value string }
	_ = json.Unmarshal(rec.exchanges[0].Response, &wrapResp)

	cek := make([]byte, 32)
	for i := range cek {
		cek[i] = byte(i)
	}
	id, alg, wrapped, err := k.Wrap(ctx, cek)
	if err != nil {
		t.Fatal(err)
	}
	if id != wrapResp.Kid || alg != "RSA-OAEP-256" || !bytes.Equal(wrapped, b64u(t, wrapResp.Value)) {
		t.Fatalf("wrap: %q %q %x", id, alg, wrapped)
	}
	got, err := k.Unwrap(ctx, id, alg, wrapped)
	if err != nil || !bytes.Equal(got, cek) {
		t.Fatalf("unwrap: %x %v", got, err)
	}

	var re *azcore.ResponseError
	if _, err := k.Unwrap(ctx, id, alg, make([]byte, 256)); !errors.Is(err, crypt.ErrUnwrap) || !errors.As(err, &re) || re.ErrorCode != "BadParameter" {
		t.Errorf("bytes the key did not wrap: %v", err)
	}
	gone := strings.Replace(id, "78deebed173b48e48f55abf87ed4cf71", "00000000000000000000000000000000", 1)
	if _, err := k.Unwrap(ctx, gone, alg, wrapped); !errors.Is(err, crypt.ErrUnknownKey) || !errors.As(err, &re) {
		t.Errorf("deleted version: %v", err)
	}
	forbidden := strings.Replace(id, "78deebed173b48e48f55abf87ed4cf71", "11111111111111111111111111111111", 1)
	if _, err := k.Unwrap(ctx, forbidden, alg, wrapped); errors.Is(err, crypt.ErrUnwrap) || errors.Is(err, crypt.ErrUnknownKey) || !errors.As(err, &re) || re.StatusCode != 403 {
		t.Errorf("forbidden: %v", err)
	}
	served := len(rec.served)
	for _, foreign := range []string{
		"https://othervault.vault.azure.net/keys/tablekit-kek/78deebed173b48e48f55abf87ed4cf71",
		"https://myvault.vault.azure.net/keys/other-key/78deebed173b48e48f55abf87ed4cf71",
		"https://myvault.vault.azure.net/keys/tablekit-kek",
		"kek-1",
	} {
		if _, err := k.Unwrap(ctx, foreign, alg, wrapped); !errors.Is(err, crypt.ErrUnknownKey) {
			t.Errorf("foreign key id %s: %v", foreign, err)
		}
	}
	if len(rec.served) != served {
		t.Error("a foreign key id reached the vault")
	}
	if len(rec.served) != len(rec.exchanges) {
		t.Errorf("served %d of %d recorded exchanges", len(rec.served), len(rec.exchanges))
	}
	for _, bad := range []struct{ url, name string }{{"http://myvault.vault.azure.net/", "k"}, {vaultURL, ""}, {vaultURL, "a/b"}, {"::", "k"}} {
		if _, err := keyvault.New(&azkeys.Client{}, bad.url, bad.name, keyvault.Config{}); !errors.Is(err, keyvault.ErrInvalidConfig) || !strings.HasPrefix(err.Error(), "keyvault: invalid configuration: ") {
			t.Errorf("New(%q, %q): %v; want ErrInvalidConfig", bad.url, bad.name, err)
		}
	}
	if _, err := keyvault.New(nil, vaultURL, "k", keyvault.Config{}); !errors.Is(err, keyvault.ErrInvalidConfig) {
		t.Errorf("New(nil client): %v; want ErrInvalidConfig", err)
	}
}

// vault is a stand-in for Key Vault's wrapKey and unwrapKey, for the round
// trip through a Table, where every content key is new: it wraps with AES
// key wrap under a local key, as a Managed HSM's AES key would.
type vault struct {
	kek   *crypt.LocalKey
	calls int
	mu    sync.Mutex
}

func (v *vault) Do(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") == "" {
		h := http.Header{}
		h.Set("WWW-Authenticate", `Bearer authorization="https://login.microsoftonline.com/tenant", resource="https://vault.azure.net"`)
		return &http.Response{StatusCode: 401, Header: h, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
	}
	v.mu.Lock()
	v.calls++
	v.mu.Unlock()
	var p struct{ Alg, Value string }
	body, _ := io.ReadAll(req.Body)
	if err := json.Unmarshal(body, &p); err != nil || p.Alg != "A256KW" {
		return nil, fmt.Errorf("bad request %s", body)
	}
	in, _ := base64.RawURLEncoding.DecodeString(p.Value)
	var out []byte
	var err error
	switch {
	case strings.HasSuffix(req.URL.Path, "/wrapkey"):
		_, _, out, err = v.kek.Wrap(req.Context(), in)
	case strings.HasSuffix(req.URL.Path, "/unwrapkey"):
		out, err = v.kek.Unwrap(req.Context(), "hsm", "A256KW", in)
	}
	status, resp := 200, fmt.Sprintf(`{"kid":"https://myvault.vault.azure.net/keys/tablekit-kek/v2","value":%q}`, base64.RawURLEncoding.EncodeToString(out))
	if err != nil {
		status, resp = 400, `{"error":{"code":"BadParameter","message":"unwrap failed"}}`
	}
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(resp)), Request: req}, nil
}

type secret struct {
	PartitionKey, RowKey string
	Value                string `table:",encrypt"`
}

// TestThroughTable encrypts and decrypts entities with the content keys
// wrapped by the vault.
func TestThroughTable(t *testing.T) {
	ctx := t.Context()
	local, _ := crypt.NewLocalKey("hsm", bytes.Repeat([]byte{4}, 32))
	v := &vault{kek: local}
	k := newKey(t, v, keyvault.Config{Algorithm: azkeys.EncryptionAlgorithmA256KW})
	c, _ := aztables.NewClientWithNoCredential("https://account.table.core.windows.net/secrets", nil)
	tbl, _ := entity.NewTable[secret](c)
	ct, err := crypt.New(tbl, crypt.Config{Key: k, Table: "secrets"})
	if err != nil {
		t.Fatal(err)
	}
	in := secret{PartitionKey: "p", RowKey: "r", Value: "the launch code"}
	body, err := ct.Marshal(ctx, &in)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(body, []byte("launch")) || !bytes.Contains(body, []byte(crypt.MetadataProperty)) {
		t.Fatalf("body %s", body)
	}
	var out secret
	if err := ct.Unmarshal(ctx, body, &out); err != nil || out != in {
		t.Fatalf("%+v %v", out, err)
	}
	if v.calls != 1 {
		t.Fatalf("%d vault calls for one write and a read of it, want 1 (the read finds the key cached)", v.calls)
	}
	// Another table (another process) unwraps with the vault, once.
	other, _ := crypt.New(tbl, crypt.Config{Key: k, Table: "secrets"})
	for range 2 {
		out = secret{}
		if err := other.Unmarshal(ctx, body, &out); err != nil || out != in {
			t.Fatalf("%+v %v", out, err)
		}
	}
	if v.calls != 2 {
		t.Fatalf("%d vault calls, want 2", v.calls)
	}
}
