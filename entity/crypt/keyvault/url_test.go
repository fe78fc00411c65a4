package keyvault_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/crypt/keyvault"
)

// TestNewShowsNoSecret: New refuses a vault URL that is not an https URL
// of a host (with a port from 1 to 65535, without user, query or
// fragment), matching ErrInvalidConfig and entity.ErrInvalid, and its
// error shows the URL without its query, user information or path, which
// may carry a signature or a password.
func TestNewShowsNoSecret(t *testing.T) {
	const sig = "c2lnbmF0dXJlLW9mLWEtdG9rZW4"
	const password = "pa55w0rd-Zq8Xv3"
	for _, u := range []string{
		"http://myvault.vault.azure.net/?sv=1&sig=" + sig,
		"http://user:" + password + "@myvault.vault.azure.net/",
		"https://user:" + password + "@myvault.vault.azure.net/",
		"https://myvault.vault.azure.net/?sv=1&sig=" + sig,
		"https://myvault.vault.azure.net/#" + sig,
		"https://myvault.vault.azure.net:0/?sig=" + sig,
		"https://myvault.vault.azure.net:99999/",
		"https://-myvault.vault.azure.net/",
		"https://myvault..vault.azure.net/",
		"ftp://myvault.vault.azure.net/?sig=" + sig,
		"https://myvault.vault.azure.net/sv=1&sig=" + sig, // the '?' forgotten
		"https://[::1/?sig=" + sig,
		"myvault.vault.azure.net/?sig=" + sig,
		sig + sig, // a token pasted as the URL
		"",
	} {
		_, err := keyvault.New(&azkeys.Client{}, u, "k", keyvault.Config{})
		if !errors.Is(err, keyvault.ErrInvalidConfig) || !errors.Is(err, entity.ErrInvalid) {
			t.Errorf("New(%q): %v, want ErrInvalidConfig and entity.ErrInvalid", u, err)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "keyvault: invalid configuration: vault URL ") || strings.Contains(msg, "connection string") {
			t.Errorf("New(%q): %q", u, msg)
		}
		for _, secret := range []string{sig[:12], password, "user:", "sv="} {
			if strings.Contains(msg, secret) {
				t.Errorf("New(%q): the error repeats %q: %s", u, secret, msg)
			}
		}
	}
	for _, u := range []string{"https://myvault.vault.azure.net/", "https://myvault.vault.azure.net", "https://myhsm.managedhsm.azure.net:443/"} {
		if _, err := keyvault.New(&azkeys.Client{}, u, "k", keyvault.Config{}); err != nil {
			t.Errorf("New(%q): %v", u, err)
		}
	}
	if _, err := keyvault.New(nil, "https://myvault.vault.azure.net/", "k", keyvault.Config{}); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("nil client: %v", err)
	}
	if _, err := keyvault.New(&azkeys.Client{}, "https://myvault.vault.azure.net/", "a/b", keyvault.Config{}); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("key name with a slash: %v", err)
	}
}
