package pipeline

import (
	"io"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// ReadBody returns the body of a request a policy is handling and rewinds
// it, so that the policies after it (and azcore's retries) send it whole.
// It is nil for a request without a body, or one that cannot be read or
// rewound (the policy then treats the request as having no body).
func ReadBody(req *policy.Request) []byte {
	body := req.Body()
	if body == nil {
		return nil
	}
	b, err := io.ReadAll(body)
	if rerr := req.RewindBody(); err != nil || rerr != nil {
		return nil
	}
	return b
}
