// Package keyvault adapts an Azure Key Vault (or Managed HSM) key to
// crypt.KeyWrapper, so that the key-encryption key of client-side encryption
// never leaves the vault (design guide §4: "keys come from a key-wrapping
// provider, Key Vault in the original"). The content key of every entity
// write is wrapped by the vault's wrapKey operation and unwrapped by
// unwrapKey, over sdk/security/keyvault/azkeys (its pipeline: credential,
// retries, logging, tracing).
//
// Guarantee: a content key is wrapped under the key's current version (or
// the pinned one), and the full key id Key Vault returns, with its version,
// is stored with the entity; unwrapping goes to that version, so entities
// stay readable after the key is rotated in the vault, until the old
// version is disabled. Re-wrap them first with crypt.Table.Rotate.
//
// Cost: one vault operation per entity write and per entity read (a
// content key read before stays in crypt's KeyCache). Key Vault's
// throttling limits (a few thousand cryptographic operations per 10
// seconds per vault) bound the table throughput; crypt.Config's
// ContentKeyWrites shares one content key among n writes, so n writes cost
// one wrap and a reader of all n one unwrap; a local key
// (crypt.NewLocalKey) or a Managed HSM suits hot tables too.
//
//	cred, _ := azidentity.NewDefaultAzureCredential(nil)
//	client, _ := azkeys.NewClient("https://myvault.vault.azure.net/", cred, nil)
//	kek, _ := keyvault.New(client, "https://myvault.vault.azure.net/", "tablekit-kek", keyvault.Config{})
//	people, _ := crypt.New(tbl, crypt.Config{Key: kek})
package keyvault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt"
	"github.com/tablekit/tablekit/internal/argerr"
	"github.com/tablekit/tablekit/internal/connstr"
)

// Config tunes a Key.
type Config struct {
	// Algorithm wraps the content keys. "" means RSA-OAEP-256, for RSA
	// keys; use azkeys.EncryptionAlgorithmA256KW for an AES key of a
	// Managed HSM.
	Algorithm azkeys.EncryptionAlgorithm
	// Version pins the key version that wraps new content keys. "" means
	// the key's current version, so a key rotated in the vault takes over
	// new writes by itself.
	Version string
}

func (c Config) withDefaults() Config {
	if c.Algorithm == "" {
		c.Algorithm = azkeys.EncryptionAlgorithmRSAOAEP256
	}
	return c
}

// Key is a Key Vault key used as a crypt.KeyWrapper. It is safe for
// concurrent use.
type Key struct {
	client *azkeys.Client
	host   string // the vault's host, lower case
	name   string
	cfg    Config
}

// ErrInvalidConfig reports an argument of New that cannot work: a nil
// client, a vault URL that is not https, a bad key name. Nothing was sent.
// Every error of New matches it, and matches entity.ErrInvalid too.
var ErrInvalidConfig = errors.New("keyvault: invalid configuration")

// configError is an error of New: "keyvault: invalid configuration: " and
// why.
type configError struct{ reason string }

func (e *configError) Error() string { return ErrInvalidConfig.Error() + ": " + e.reason }

// Is makes errors.Is(err, ErrInvalidConfig) and errors.Is(err,
// entity.ErrInvalid) true.
func (e *configError) Is(target error) bool {
	return target == ErrInvalidConfig || target == entity.ErrInvalid
}

// New returns the key named name of the vault at vaultURL, reached through
// client (made for the same vault). Nothing is sent.
//
// vaultURL is https://NAME.vault.azure.net/ (or a Managed HSM's
// https://NAME.managedhsm.azure.net/): an https URL whose host is a DNS
// name, an IPv4 address or a bracketed IPv6 address, with a port (if any)
// from 1 to 65535, and no user, query or fragment, as a connection
// string's endpoint. An error shows the URL's scheme and host, never its
// query or user information.
func New(client *azkeys.Client, vaultURL, name string, cfg Config) (*Key, error) {
	if client == nil {
		return nil, &configError{"nil *azkeys.Client"}
	}
	const setting = "vault URL"
	if _, err := connstr.CheckEndpoint(setting, vaultURL); err != nil {
		reason := err.Error()
		if ce := (*connstr.Error)(nil); errors.As(err, &ce) {
			reason = ce.Reason
		}
		return nil, &configError{reason + " (want https://NAME.vault.azure.net/)"}
	}
	u, err := url.Parse(vaultURL)
	if err != nil {
		return nil, &configError{setting + " cannot be read"} // CheckEndpoint read it
	}
	if u.Scheme != "https" {
		// An http URL without user or query (CheckEndpoint).
		return nil, &configError{fmt.Sprintf("%s %q is not https://NAME.vault.azure.net/", setting, u.Scheme+"://"+u.Host+"/")}
	}
	if name == "" || strings.Contains(name, "/") {
		return nil, &configError{fmt.Sprintf("key name %q is empty or has a /", name)}
	}
	return &Key{client: client, host: strings.ToLower(u.Host), name: name, cfg: cfg.withDefaults()}, nil
}

// Wrap wraps cek with the vault's wrapKey and returns the full key id
// (with the version that wrapped it).
func (k *Key) Wrap(ctx context.Context, cek []byte) (string, string, []byte, error) {
	if err := k.ready(ctx); err != nil {
		return "", "", nil, err
	}
	alg := k.cfg.Algorithm
	resp, err := k.client.WrapKey(ctx, k.name, k.cfg.Version, azkeys.KeyOperationParameters{Algorithm: &alg, Value: cek}, nil)
	if err != nil {
		return "", "", nil, fmt.Errorf("keyvault: wrapKey with %s: %w", k.name, err)
	}
	if resp.KID == nil || len(resp.Result) == 0 {
		return "", "", nil, fmt.Errorf("keyvault: wrapKey with %s returned no key id or result", k.name)
	}
	return string(*resp.KID), string(alg), resp.Result, nil
}

// Unwrap unwraps with the key version named by keyID. A keyID of another
// vault or key is crypt.ErrUnknownKey without a request; the vault's "not
// found" is crypt.ErrUnknownKey and its refusal of the wrapped bytes
// crypt.ErrUnwrap, each wrapping the *azcore.ResponseError.
func (k *Key) Unwrap(ctx context.Context, keyID, algorithm string, wrapped []byte) ([]byte, error) {
	if err := k.ready(ctx); err != nil {
		return nil, err
	}
	version, ok := k.version(keyID)
	if !ok {
		return nil, crypt.ErrUnknownKey
	}
	alg := azkeys.EncryptionAlgorithm(algorithm)
	resp, err := k.client.UnwrapKey(ctx, k.name, version, azkeys.KeyOperationParameters{Algorithm: &alg, Value: wrapped}, nil)
	if err != nil {
		var re *azcore.ResponseError
		if errors.As(err, &re) {
			switch re.StatusCode {
			case http.StatusNotFound:
				return nil, fmt.Errorf("%w: %w", crypt.ErrUnknownKey, err)
			case http.StatusBadRequest:
				return nil, fmt.Errorf("%w: %w", crypt.ErrUnwrap, err)
			}
		}
		return nil, fmt.Errorf("keyvault: unwrapKey with %s: %w", keyID, err)
	}
	return resp.Result, nil
}

// version returns the key version a stored key id names, if the id is one
// of this key's: https://HOST/keys/NAME/VERSION.
func (k *Key) version(keyID string) (string, bool) {
	u, err := url.Parse(keyID)
	if err != nil || !strings.EqualFold(u.Host, k.host) {
		return "", false
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 3 || parts[0] != "keys" || parts[1] != k.name || parts[2] == "" {
		return "", false
	}
	return parts[2], true
}

// ready refuses a nil or zero Key, which New never returns, and a nil ctx,
// before any request.
func (k *Key) ready(ctx context.Context) error {
	if k == nil || k.client == nil {
		return &configError{"*keyvault.Key " + argerr.ZeroValue}
	}
	return argerr.Ctx(ctx, func(field, reason string) error { return &configError{field + " " + reason} })
}
