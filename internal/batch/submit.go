package batch

import (
	"context"
	"fmt"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/internal/errline"
)

// TransactionError reports an entity group transaction the service refused.
// Nothing was written. Op is the failing operation; Err is what aztables
// returned (usually an *azcore.ResponseError with status 202 and no error
// code), so errors.As reaches it.
//
// Errors about the changeset as a whole also carry an index prefix, 0: more
// than 100 operations is reported as operation 0 failing with 400
// InvalidInput. Check the EGT rules (at most 100 operations, 4 MiB, one
// partition, each entity once) before submitting.
type TransactionError struct {
	Op  OpResult
	Err error
}

func (e *TransactionError) Error() string {
	idx := "an unknown operation"
	if e.Op.Index >= 0 {
		idx = fmt.Sprintf("operation %d", e.Op.Index)
	}
	return fmt.Sprintf("batch: transaction failed at %s: %d %s: %s", idx, e.Op.StatusCode, e.Op.Code, e.Op.Message)
}

func (e *TransactionError) Unwrap() error { return e.Err }

// Submit runs actions as one entity group transaction through
// client.SubmitTransaction and returns what aztables v1.4.1 drops: one
// OpResult per action, in order, with the new ETags (and the entity body of
// inserts that asked for content). When the service refuses the transaction
// the error is a *TransactionError naming the failing operation.
//
// It captures the raw response with policy.WithCaptureResponse and reads it
// with runtime.Payload, which returns the body azcore's body-download policy
// buffered even though SubmitTransaction has already read it.
//
// A transaction that succeeded but whose reply cannot be read, or holds a
// different number of results than actions, returns an error wrapping
// ErrMalformed: the writes happened, but the ETags are unknown.
func Submit(ctx context.Context, client *aztables.Client, actions []aztables.TransactionAction, opts *aztables.SubmitTransactionOptions) ([]OpResult, error) {
	var resp *http.Response
	err := submitTransaction(policy.WithCaptureResponse(ctx, &resp), client, actions, opts)
	if resp == nil {
		return nil, err // no response: transport error, cancelled context, invalid actions
	}
	body, perr := runtime.Payload(resp)
	if perr != nil {
		return nil, errline.Join(err, perr)
	}
	return Reply(resp, body, len(actions), err)
}

// Reply reads the service's answer to a $batch request of n operations:
// resp with its body (buffered by azcore), and err, the error the sender
// made of it (nil, or an *azcore.ResponseError; one is made from resp when
// needed). It returns one OpResult per operation, or a *TransactionError
// naming the failing operation, or an error wrapping ErrMalformed when
// the transaction was accepted but its reply cannot be matched up.
func Reply(resp *http.Response, body []byte, n int, err error) ([]OpResult, error) {
	if resp.StatusCode != http.StatusAccepted {
		// The whole request was refused (bad batch, authentication, ...):
		// the body is a single error document, not a multipart reply.
		op := OpResult{StatusCode: resp.StatusCode, Header: resp.Header, Body: body}
		op.Code, op.Message, op.RequestID, op.Index = parseError(body)
		if op.Code == "" {
			op.Code = resp.Header.Get("x-ms-error-code")
		}
		if err == nil {
			err = runtime.NewResponseError(resp)
		}
		return nil, &TransactionError{Op: op, Err: err}
	}
	results, perr := ParseResponse(resp.Header.Get("Content-Type"), body)
	if perr != nil {
		if err != nil {
			return nil, errline.Join(err, perr)
		}
		return nil, fmt.Errorf("the transaction was accepted but its reply is unreadable: %w", perr)
	}
	if f, ok := Failure(results); ok {
		if err == nil {
			err = runtime.NewResponseError(resp)
		}
		return results, &TransactionError{Op: f, Err: err}
	}
	if err != nil {
		return results, err
	}
	if len(results) != n {
		return nil, fmt.Errorf("%w: %d results for %d operations (the transaction was accepted)", ErrMalformed, len(results), n)
	}
	return results, nil
}

// submitTransaction calls client.SubmitTransaction, turning a panic into an
// error: aztables v1.4.1 slices the reply body without checking its length
// (getBoundaryName), so a 202 or 204 whose body has no line break panics.
// The captured response is still set by then and is parsed by the caller.
func submitTransaction(ctx context.Context, client *aztables.Client, actions []aztables.TransactionAction, opts *aztables.SubmitTransactionOptions) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("batch: aztables SubmitTransaction panicked reading the reply: %v", r)
		}
	}()
	_, err = client.SubmitTransaction(ctx, actions, opts)
	return err
}
