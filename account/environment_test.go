package account_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/account"
)

// TestFromEnvironment: the connection string of the test account in
// TABLEKIT_CONNECTION_STRING gives an account that works (useAll reads
// and writes through every client); an account URL alone gives one named
// by the URL, with azidentity's credential (nothing sent); neither is a
// *ConfigError naming both variables; a connection string that does not
// parse is NewFromConnectionString's error, which holds no key.
func TestFromEnvironment(t *testing.T) {
	t.Setenv(account.EnvConnectionString, env.ConnectionString)
	t.Setenv(account.EnvAccountURL, "https://ignored.table.core.windows.net/")
	acct, err := account.FromEnvironment(quick())
	if err != nil {
		t.Fatal(err)
	}
	useAll(t, acct)

	t.Setenv(account.EnvConnectionString, "")
	t.Setenv(account.EnvAccountURL, "https://tablekitexample.table.core.windows.net/")
	if acct, err = account.FromEnvironment(nil); err != nil {
		t.Fatal(err)
	} else if acct.Name() != "tablekitexample" {
		t.Errorf("an account URL gave account %q, want tablekitexample", acct.Name())
	}

	t.Setenv(account.EnvAccountURL, "")
	_, err = account.FromEnvironment(nil)
	var ce *account.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(ce.Field, account.EnvConnectionString) || !strings.Contains(ce.Field, account.EnvAccountURL) {
		t.Errorf("neither variable set: %v, want a *ConfigError naming both", err)
	}

	const key = "c2VjcmV0LWtleS1vZi10aGUtdGVzdA=="
	t.Setenv(account.EnvConnectionString, "AccountName=x;AccountKey="+key+";EndpointSuffix=")
	if _, err = account.FromEnvironment(nil); !errors.As(err, &ce) || strings.Contains(err.Error(), key) {
		t.Errorf("a connection string that does not parse: %v, want a *ConfigError without the key", err)
	}
}
