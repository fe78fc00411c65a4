package integration

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/tablekit/tablekit/integration/cosmos"
)

// EnvProfile names a variable selecting a service profile that every
// client of an Env applies in its pipeline, so that a whole package's
// suite runs as if against that service:
//
//	TABLEKIT_PROFILE=cosmos go test -count=1 ./patterns/wide/
//
// Unset or empty means no profile (Table storage as Azurite serves it).
const EnvProfile = "TABLEKIT_PROFILE"

// Profiles that EnvProfile may name.
const (
	// ProfileCosmos is the Azure Cosmos DB for Table API as package
	// cosmos models it: opaque ETags, query pages in reverse order,
	// RowKeys of at most 255 bytes, $batch bodies of at most 2 MB and
	// reserved property names. It applies to the table service only: a
	// Cosmos DB account has no queues or blobs, which an application
	// keeps in a storage account beside it.
	ProfileCosmos = "cosmos"
)

// profileFromEnv reads EnvProfile.
func profileFromEnv() (string, error) {
	switch p := os.Getenv(EnvProfile); p {
	case "", ProfileCosmos:
		return p, nil
	default:
		return "", fmt.Errorf("%s=%q: the profiles are %q", EnvProfile, p, ProfileCosmos)
	}
}

// Profile returns the service profile the Env's clients apply
// (ProfileCosmos), or "" when they apply none.
func (e *Env) Profile() string {
	if e.profile == nil {
		return ""
	}
	return ProfileCosmos
}

// Cosmos reports whether the Env's clients apply the Cosmos DB profile
// (TABLEKIT_PROFILE=cosmos), for a test whose claim does not hold there.
func (e *Env) Cosmos() bool { return e.profile != nil }

// tableProfile applies a table service profile to the requests addressed
// to the table service, and lets the others (queues, blobs) through. Table
// requests are told by their host not being the queue's or the blob's, so
// that a test's proxy in front of the table endpoint is covered too. One
// value serves an Env and all its views, so that an ETag one client was
// given is understood by every other, as one account's would be.
type tableProfile struct {
	others  []string // the queue and blob endpoints' hosts
	profile *cosmos.Profile
}

// Do implements policy.Policy.
func (p *tableProfile) Do(req *policy.Request) (*http.Response, error) {
	if slices.Contains(p.others, req.Raw().URL.Host) {
		return req.Next()
	}
	return p.profile.Do(req)
}

func newTableProfile(queueEndpoint, blobEndpoint string) (*tableProfile, error) {
	p := &tableProfile{profile: cosmos.New()}
	for _, ep := range []string{queueEndpoint, blobEndpoint} {
		if ep == "" {
			continue
		}
		u, err := url.Parse(ep)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("%s: endpoint %q: no host", EnvProfile, ep)
		}
		p.others = append(p.others, u.Host)
	}
	return p, nil
}

// addProfile puts e's profile last among o's per-retry policies, moving it
// there if o has it already: nearest the service, after a view's policies
// (a fault injector, a meter, a policy keeping response bodies), so that
// everything on the client's side sees the profile's requests and answers,
// as it would see Cosmos DB's.
func (e *Env) addProfile(o *azcore.ClientOptions) {
	if e.profile == nil {
		return
	}
	o.PerRetryPolicies = slices.DeleteFunc(slices.Clone(o.PerRetryPolicies), func(p policy.Policy) bool { return p == policy.Policy(e.profile) })
	o.PerRetryPolicies = append(o.PerRetryPolicies, e.profile)
}
