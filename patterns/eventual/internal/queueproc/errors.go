package queueproc

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// PoisonError is returned by a handler for a message that can never succeed
// (it does not decode, its kind is unknown): the loop moves it to the poison
// queue at once instead of retrying it.
type PoisonError struct {
	Reason string
	Err    error
}

func (e *PoisonError) Error() string {
	if e.Err == nil {
		return "queueproc: poison message: " + e.Reason
	}
	return fmt.Sprintf("queueproc: poison message: %s: %v", e.Reason, e.Err)
}

func (e *PoisonError) Unwrap() error { return e.Err }

// Poison returns a *PoisonError with the reason and cause.
func Poison(reason string, err error) error { return &PoisonError{Reason: reason, Err: err} }

// PanicError is what a handler that panicked is reported as; the message is
// retried like after any other error.
type PanicError struct {
	Value any
}

func (e *PanicError) Error() string { return fmt.Sprintf("eventual: handler panicked: %v", e.Value) }

// IsGone reports whether err says that a message is no longer ours: it was
// deleted, or its pop receipt is stale because it was received again (404
// MessageNotFound on the service; 400 PopReceiptMismatch on Azurite).
func IsGone(err error) bool {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return false
	}
	switch {
	case re.StatusCode == http.StatusNotFound && re.ErrorCode != "QueueNotFound":
		return true
	case re.StatusCode == http.StatusBadRequest && re.ErrorCode == "PopReceiptMismatch":
		return true
	}
	return false
}

// IsQueueNotFound reports whether err says the queue does not exist.
func IsQueueNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound && re.ErrorCode == "QueueNotFound"
}

// IsQueueExists reports whether err says the queue exists already (with
// other metadata; the service answers 204 for an identical one).
func IsQueueExists(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusConflict && re.ErrorCode == "QueueAlreadyExists"
}
