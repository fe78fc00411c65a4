package cost

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// Service is one of the storage services a request is billed to.
type Service string

// The services a Meter tells apart.
const (
	Table Service = "table"
	Queue Service = "queue"
	Blob  Service = "blob"
	// Other is a request the meter cannot attribute to a service.
	Other Service = "other"
)

// Operation kinds. Table and queue requests are named after the REST
// operation; blob requests after the REST operation too (PutBlob, AppendBlock,
// …). An operation the meter does not recognise is counted under its HTTP
// method.
const (
	// Table service.
	OpQuery       = "Query"       // query entities, including a point query by filter
	OpGet         = "Get"         // point read by keys
	OpInsert      = "Insert"      // POST of one entity
	OpUpdate      = "Update"      // PUT/MERGE with If-Match: replace or merge
	OpUpsert      = "Upsert"      // PUT/MERGE without If-Match: insert or replace/merge
	OpDelete      = "Delete"      // delete of one entity
	OpBatch       = "Batch"       // an entity group transaction: one billable transaction
	OpCreateTable = "CreateTable" // POST /Tables
	OpDeleteTable = "DeleteTable" // DELETE /Tables('name')
	OpListTables  = "ListTables"  // GET /Tables
	OpTableACL    = "TableACL"    // get or set a table's stored access policies

	// Queue service.
	OpPutMessage     = "PutMessage"
	OpGetMessages    = "GetMessages"
	OpPeekMessages   = "PeekMessages"
	OpUpdateMessage  = "UpdateMessage"
	OpDeleteMessage  = "DeleteMessage"
	OpClearMessages  = "ClearMessages"
	OpCreateQueue    = "CreateQueue"
	OpDeleteQueue    = "DeleteQueue"
	OpQueueMetadata  = "QueueMetadata"
	OpListQueues     = "ListQueues"
	OpQueueOperation = "QueueOperation"

	// Blob service.
	OpPutBlob           = "PutBlob"
	OpPutBlock          = "PutBlock"
	OpPutBlockList      = "PutBlockList"
	OpAppendBlock       = "AppendBlock"
	OpGetBlob           = "GetBlob"
	OpGetBlobProperties = "GetBlobProperties"
	OpSetBlobMetadata   = "SetBlobMetadata"
	OpDeleteBlob        = "DeleteBlob"
	OpListBlobs         = "ListBlobs"
	OpCreateContainer   = "CreateContainer"
	OpDeleteContainer   = "DeleteContainer"
	OpBlobOperation     = "BlobOperation"
)

// Key is what a transaction is counted under.
type Key struct {
	Service Service
	Op      string
}

// Meter counts storage transactions. It is safe for concurrent use; one
// Meter may serve any number of clients of any of the three services.
// The zero value is not usable: call NewMeter.
type Meter struct {
	mu     sync.Mutex
	counts map[Key]int64
}

// NewMeter returns a meter with every count at zero.
func NewMeter() *Meter { return &Meter{counts: map[Key]int64{}} }

// Policy returns the pipeline policy that counts. Add it to a client's
// ClientOptions.PerRetryPolicies: there it sees every try, so a request
// azcore retries is counted once per try, as the service bills it. (In
// PerCallPolicies it would count a logical call once, whatever its retries.)
func (m *Meter) Policy() policy.Policy { return meterPolicy{m: m} }

// Add counts n transactions under k, for work the meter cannot see (a
// transaction made through another client).
func (m *Meter) Add(k Key, n int64) {
	m.mu.Lock()
	m.counts[k] += n
	m.mu.Unlock()
}

// Snapshot returns the counts so far.
func (m *Meter) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Snapshot{counts: maps.Clone(m.counts)}
}

// Reset sets every count back to zero.
func (m *Meter) Reset() {
	m.mu.Lock()
	clear(m.counts)
	m.mu.Unlock()
}

type meterPolicy struct {
	m   *Meter
	svc Service // "" means: tell from the request
}

// Do counts the request before sending it: a request that fails on the way,
// or whose reply is lost, may still have been executed and billed. A
// request whose context has already ended is not counted: net/http sends
// nothing for it (tablekit's constructors probe a client that way).
func (p meterPolicy) Do(req *policy.Request) (*http.Response, error) {
	if req.Raw().Context().Err() != nil {
		return req.Next()
	}
	k := Classify(req.Raw())
	if p.svc != "" && p.svc != k.Service {
		k = Key{Service: p.svc, Op: operationOf(p.svc, req.Raw())}
	}
	p.m.Add(k, 1)
	return req.Next()
}

// Snapshot is a set of counts at one moment. The zero value is empty.
type Snapshot struct {
	counts map[Key]int64
}

// Sub returns the counts of s less those of before: what happened between
// two snapshots of one meter.
func (s Snapshot) Sub(before Snapshot) Snapshot {
	out := make(map[Key]int64, len(s.counts))
	for k, n := range s.counts {
		if d := n - before.counts[k]; d != 0 {
			out[k] = d
		}
	}
	for k, n := range before.counts {
		if _, ok := s.counts[k]; !ok && n != 0 {
			out[k] = -n
		}
	}
	return Snapshot{counts: out}
}

// Total is the number of transactions of every service.
func (s Snapshot) Total() int64 {
	var t int64
	for _, n := range s.counts {
		t += n
	}
	return t
}

// Of is the number of transactions billed to one service.
func (s Snapshot) Of(svc Service) int64 {
	var t int64
	for k, n := range s.counts {
		if k.Service == svc {
			t += n
		}
	}
	return t
}

// Count is the number of transactions of one operation kind of a service.
func (s Snapshot) Count(svc Service, op string) int64 { return s.counts[Key{svc, op}] }

// Keys lists what s counted, sorted by service and operation.
func (s Snapshot) Keys() []Key {
	keys := slices.Collect(maps.Keys(s.counts))
	slices.SortFunc(keys, func(a, b Key) int {
		if c := strings.Compare(string(a.Service), string(b.Service)); c != 0 {
			return c
		}
		return strings.Compare(a.Op, b.Op)
	})
	return keys
}

// String lists the counts, such as "7 transactions: table Batch=2, queue GetMessages=5".
func (s Snapshot) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d transactions", s.Total())
	for i, k := range s.Keys() {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s=%d", k.Service, k.Op, s.counts[k])
	}
	return b.String()
}
