package provision

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

func answer(status int, code string) error {
	return &azcore.ResponseError{StatusCode: status, ErrorCode: code}
}

// Create asks again while the name is being deleted, and returns the
// first answer that is not that.
func TestCreateWaitsWhileBeingDeleted(t *testing.T) {
	calls := 0
	start := time.Now()
	err := Create(context.Background(), `queue "q"`, func(context.Context) (bool, error) {
		calls++
		if calls < 3 {
			return true, answer(http.StatusConflict, "QueueBeingDeleted")
		}
		return false, nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Create = %v after %d calls, want nil after 3", err, calls)
	}
	// Two waits: at least FirstWait/2 and FirstWait.
	if took := time.Since(start); took < FirstWait/2+FirstWait {
		t.Errorf("took %v: the waits are missing", took)
	}
}

// When ctx ends while the name is being deleted, the error matches
// ErrBeingDeleted, ctx's error and the last answer, in one line.
func TestCreateGivesUpWhenCtxEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	last := answer(http.StatusConflict, "ContainerBeingDeleted")
	calls := 0
	err := Create(ctx, `container "c"`, func(context.Context) (bool, error) {
		calls++
		return true, last
	})
	if !errors.Is(err, ErrBeingDeleted) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, last) {
		t.Fatalf("Create = %v", err)
	}
	if calls < 2 {
		t.Errorf("%d calls in 300 ms", calls)
	}
	want := `container "c" is being deleted by the service and was not created before the context ended (context deadline exceeded): 409 ContainerBeingDeleted`
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

// Any other answer, success or failure, ends Create at once.
func TestCreateReturnsOtherAnswers(t *testing.T) {
	refused := answer(http.StatusForbidden, "AuthorizationPermissionMismatch")
	for _, want := range []error{nil, refused} {
		calls := 0
		err := Create(context.Background(), "x", func(context.Context) (bool, error) {
			calls++
			return false, want
		})
		if err != want || calls != 1 {
			t.Errorf("Create = %v after %d calls, want %v after 1", err, calls, want)
		}
	}
}

func TestAnswer(t *testing.T) {
	for err, want := range map[error]string{
		answer(http.StatusConflict, "QueueBeingDeleted"): "409 QueueBeingDeleted",
		answer(http.StatusForbidden, ""):                 "403 Forbidden",
		errors.New("dial tcp: refused\nmore"):            "dial tcp: refused",
	} {
		if got := Answer(err); got != want {
			t.Errorf("Answer(%v) = %q, want %q", err, got, want)
		}
	}
	e := &Error{What: `queue "q"`, Err: answer(http.StatusForbidden, "AuthorizationFailure")}
	if e.Error() != `queue "q": 403 AuthorizationFailure` || !strings.Contains(Answer(e), "403") {
		t.Errorf("Error() = %q", e)
	}
}
