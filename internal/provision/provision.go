package provision

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// ErrBeingDeleted is matched by the error of a create whose name the
// service was still deleting when ctx ended. entity.ErrBeingDeleted and
// account.ErrBeingDeleted are this value.
var ErrBeingDeleted = errors.New("entity: the name is being deleted")

// The waits between creates of a name being deleted: the n-th is drawn
// from [W/2, W], W = FirstWait·2^(n−1), at most MaxWait.
const (
	FirstWait = 200 * time.Millisecond
	MaxWait   = 5 * time.Second
)

// Create calls create until it returns deleting false — its error, nil
// when the resource exists — waiting between calls (see FirstWait) while
// the service answers that the name is being deleted. When ctx ends
// during such a wait, the error names what (such as `table "Orders"`),
// matches ErrBeingDeleted, ctx's error and the last answer.
func Create(ctx context.Context, what string, create func(ctx context.Context) (deleting bool, err error)) error {
	wait := FirstWait
	for {
		deleting, err := create(ctx)
		if !deleting {
			return err
		}
		d := wait - time.Duration(rand.Int64N(int64(wait/2)+1))
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return &deletingError{what: what, last: err, ctx: ctx.Err()}
		case <-timer.C:
		}
		wait = min(2*wait, MaxWait)
	}
}

// deletingError is a create given up while the name was being deleted.
type deletingError struct {
	what string
	last error // the service's last answer
	ctx  error // why the wait ended
}

func (e *deletingError) Error() string {
	return e.what + " is being deleted by the service and was not created before the context ended (" + e.ctx.Error() + "): " + Answer(e.last)
}

// Is makes errors.Is(err, ErrBeingDeleted) true.
func (e *deletingError) Is(target error) bool { return target == ErrBeingDeleted }

// Unwrap returns the last answer and ctx's error.
func (e *deletingError) Unwrap() []error { return []error{e.last, e.ctx} }

// Error is a create that failed: What names the resource (`queue
// "orders"`), Err is the service's answer or the transport's error.
type Error struct {
	What string
	Err  error
}

func (e *Error) Error() string { return e.What + ": " + Answer(e.Err) }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Answer says in one line what the service answered ("409
// QueueBeingDeleted"), or the first line of any other error: an
// *azcore.ResponseError's text is the whole HTTP exchange.
func Answer(err error) string {
	if err == nil {
		return "<nil>"
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			return strconv.Itoa(re.StatusCode) + " " + re.ErrorCode
		}
		return strconv.Itoa(re.StatusCode) + " " + http.StatusText(re.StatusCode)
	}
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}

// conflict reports a 409 answer with the given code.
func conflict(err error, code string) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusConflict && re.ErrorCode == code
}

// Queue creates q unless it exists (see Create). A queue that exists with
// other metadata (409 QueueAlreadyExists) exists: nil.
func Queue(ctx context.Context, q *azqueue.QueueClient) error {
	what := "queue " + strconv.Quote(QueueName(q))
	return Create(ctx, what, func(ctx context.Context) (bool, error) {
		_, err := q.Create(ctx, nil)
		switch {
		case err == nil, conflict(err, "QueueAlreadyExists"):
			return false, nil
		case conflict(err, "QueueBeingDeleted"):
			return true, err
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return false, err
		}
		return false, &Error{What: what, Err: err}
	})
}

// QueueName is q's queue name, as its URL gives it (never the URL, whose
// query may carry a SAS).
func QueueName(q *azqueue.QueueClient) string {
	if parts, err := azqueue.ParseURL(q.URL()); err == nil {
		return parts.QueueName
	}
	return "?"
}

// ContainerName is c's container name, as its URL gives it.
func ContainerName(c *container.Client) string {
	if parts, err := blob.ParseURL(c.URL()); err == nil {
		return parts.ContainerName
	}
	return "?"
}

// Container creates c unless it exists (see Create), with no public
// access.
func Container(ctx context.Context, c *container.Client) error {
	what := "container " + strconv.Quote(ContainerName(c))
	return Create(ctx, what, func(ctx context.Context) (bool, error) {
		_, err := c.Create(ctx, nil)
		switch {
		case err == nil, conflict(err, "ContainerAlreadyExists"):
			return false, nil
		case conflict(err, "ContainerBeingDeleted"):
			return true, err
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return false, err
		}
		return false, &Error{What: what, Err: err}
	})
}
