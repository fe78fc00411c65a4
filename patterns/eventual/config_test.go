package eventual

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/entity"
)

// testQueue returns clients of a queue that is never contacted.
func testQueue(t testing.TB) Queue {
	t.Helper()
	svc, err := azqueue.NewServiceClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/", nil)
	if err != nil {
		t.Fatal(err)
	}
	return QueuesOf(svc, "work")[0]
}

func TestConfigDefaults(t *testing.T) {
	c, err := Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Workers != 8 || c.BatchSize != 32 || c.VisibilityTimeout != 30*time.Second || c.MaxDeliveries != 5 ||
		c.RetryDelay != time.Second || c.MaxRetryDelay != time.Minute || c.PollInterval != 100*time.Millisecond ||
		c.MaxPollInterval != 10*time.Second || c.ShutdownGrace != 10*time.Second || c.Encoding != Base64 ||
		c.EnqueueConcurrency != entity.DefaultConcurrency || c.MarkerTTL != 8*24*time.Hour || c.Clock == nil {
		t.Errorf("defaults %+v", c)
	}
	if c, _ := (Config{RetryDelay: NoRetryDelay}).withDefaults(); c.RetryDelay != 0 {
		t.Errorf("RetryDelay NoRetryDelay became %v, want 0 (at once)", c.RetryDelay)
	}
}

func TestInvalidConfigIsRefused(t *testing.T) {
	for name, c := range map[string]Config{
		"BatchSize":         {BatchSize: 33},
		"VisibilityTimeout": {VisibilityTimeout: 500 * time.Millisecond},
		"too long":          {VisibilityTimeout: 8 * 24 * time.Hour},
		"MaxRetryDelay":     {RetryDelay: time.Minute, MaxRetryDelay: time.Second},
		"MaxPollInterval":   {PollInterval: time.Second, MaxPollInterval: time.Millisecond},
		"Workers":           {Workers: -1},
		"Encoding":          {Encoding: 7},
		"Poison":            {Poison: 2},
	} {
		_, err := New([]Queue{testQueue(t)}, nil, c)
		var ce *ConfigError
		if !errors.Is(err, ErrInvalidConfig) || !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a *ConfigError", name, err)
		}
	}
	svc, _ := azqueue.NewServiceClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/", nil)
	mismatch := Queue{Work: svc.NewQueueClient("a"), Poison: svc.NewQueueClient("b")}
	long := QueuesOf(svc, strings.Repeat("q", 57))[0]
	for name, qs := range map[string][]Queue{
		"no queue":      nil,
		"nil client":    {{Work: svc.NewQueueClient("a")}},
		"poison name":   {mismatch},
		"name too long": {long},
		// Names the service refuses (400 InvalidResourceName).
		"upper case and underscore": QueuesOf(svc, "A_B"),
		"two characters":            QueuesOf(svc, "ab"),
		"two hyphens":               QueuesOf(svc, "a--b"),
		"leading hyphen":            QueuesOf(svc, "-abc"),
	} {
		if _, err := New(qs, nil, Config{}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
}

func TestHandleValidates(t *testing.T) {
	p, err := New([]Queue{testQueue(t)}, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, int) error { return nil }
	if err := Handle(p, NewKind[int]("Count.v1"), h, HandleOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Handle(p, NewKind[int]("Count.v1"), h, HandleOptions{}); !errors.Is(err, ErrDuplicateKind) {
		t.Errorf("second handler = %v, want ErrDuplicateKind", err)
	}
	for name, err := range map[string]error{
		"bad name":   Handle(p, NewKind[int]("a b"), h, HandleOptions{}),
		"nil":        Handle[int](p, NewKind[int]("Nil.v1"), nil, HandleOptions{}),
		"visibility": Handle(p, NewKind[int]("Vis.v1"), h, HandleOptions{VisibilityTimeout: time.Millisecond}),
	} {
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
}

func TestMessagesAreCheckedBeforeSending(t *testing.T) {
	p, err := New([]Queue{testQueue(t)}, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewKind[int]("bad kind").Message(1); !errors.Is(err, ErrInvalidMessage) {
		t.Errorf("Message of a bad kind = %v", err)
	}
	if _, err := NewKind[func()]("Func.v1").Message(func() {}); err == nil {
		t.Error("a payload that cannot be JSON was accepted")
	}
	good, err := NewKind[int]("Count.v1").Message(1)
	if err != nil || good.ID == "" || string(good.Payload) != "1" {
		t.Fatalf("Message = %+v, %v", good, err)
	}
	for name, m := range map[string]Message{
		"no kind":     {ID: "a", Payload: []byte("1")},
		"bad id":      {Kind: "K.v1", ID: "a#b", Payload: []byte("1")},
		"no id":       {Kind: "K.v1", Payload: []byte("1")},
		"bad payload": {Kind: "K.v1", ID: "a", Payload: []byte("{")},
		"no payload":  {Kind: "K.v1", ID: "a"},
		"negative":    {Kind: "K.v1", ID: "a", Payload: []byte("1"), Delay: -time.Second},
		"too late":    {Kind: "K.v1", ID: "a", Payload: []byte("1"), Delay: MaxDelay + time.Second},
	} {
		// The queue is unreachable: a request would fail differently.
		err := p.Enqueue(t.Context(), good, m)
		var ee *EnqueueError
		if !errors.Is(err, ErrInvalidMessage) || !errors.Is(err, entity.ErrInvalid) || !errors.As(err, &ee) || ee.Index != 1 {
			t.Errorf("%s: %v, want an *EnqueueError at index 1 matching ErrInvalidMessage and entity.ErrInvalid", name, err)
		}
	}
}
