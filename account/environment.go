package account

import (
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// The environment variables FromEnvironment reads.
const (
	// EnvConnectionString holds a storage connection string: the portal's
	// ("Access keys"), a SAS one, or "UseDevelopmentStorage=true" for
	// Azurite on its default ports.
	EnvConnectionString = "TABLEKIT_CONNECTION_STRING"
	// EnvAccountURL holds an account's URL
	// (https://NAME.table.core.windows.net/), reached with azidentity's
	// default credential when EnvConnectionString is not set.
	EnvAccountURL = "TABLEKIT_ACCOUNT_URL"
)

// FromEnvironment returns the storage account the environment names, as
// every example program of tablekit builds it: EnvConnectionString
// (NewFromConnectionString), or else EnvAccountURL (New) with
// azidentity.NewDefaultAzureCredential — az login, the AZURE_*
// environment variables, a managed identity. opts are as for New. With
// neither variable set it returns a *ConfigError naming both; a set one
// that does not parse, the *ConfigError of New or NewFromConnectionString,
// which never holds a key. Nothing is sent.
//
// It is a convenience for programs that follow tablekit's names; a
// service with its own configuration calls New or
// NewFromConnectionString with its own values.
func FromEnvironment(opts *Options) (*Account, error) {
	if cs := os.Getenv(EnvConnectionString); cs != "" {
		return NewFromConnectionString(cs, opts)
	}
	if url := os.Getenv(EnvAccountURL); url != "" {
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, err
		}
		return New(url, cred, opts)
	}
	return nil, &ConfigError{Field: EnvConnectionString + " and " + EnvAccountURL, Reason: "are both unset: set a connection string (UseDevelopmentStorage=true for Azurite) or an account URL"}
}
