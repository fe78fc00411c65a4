// Package indextest is the shared test suite of tablekit's two index
// patterns, patterns/secondaryindex (entries) and patterns/indexentity
// (lists): scenarios written once, run by each package's tests through a
// small [Adapter], so that a defect found in one is looked for in the
// other.
//
// Every scenario indexes orders — entity.DynamicEntity primaries, RowKey
// "order_…", whose property Status is the indexed value — with one index
// named "status", laid out as a [Layout] says; the adapter builds the
// package's Set of it. The scenarios:
//
//   - [LayoutChange]: a Set of one layout writes orders, a Set of another
//     layout (Buckets, Placement, Unique, copied Properties, an entries
//     table) runs Rebuild once: then Check finds nothing, a second Rebuild
//     repairs nothing, every lookup returns exactly the orders holding its
//     value, and the tables (read raw) hold exactly what a Set of the new
//     layout writes from scratch — nothing of the old layout is left.
//   - [Unwritable]: a write whose index entry or list could never be
//     written (too many properties, too large, keys too long) is refused
//     before anything is stored, or it converges: no message is ever
//     poisoned by it.
//   - [ReleaseUnknown]: a worker's removal of an old entry meets
//     entity.ErrOutcomeUnknown (every try of it failed before sending); it
//     is settled or retried, never taken for done.
//   - [TooManyMessages]: a write carrying more of the caller's messages
//     than its transaction holds is refused before any request with an
//     *eventual.TooManyMessagesError; exactly the limit commits.
//   - [CreateRace]: writers racing to Modify one missing order with
//     entity.ModifyOptions.Create each apply their change once, and its
//     entries or lists agree with it.
//   - [Provision]: a Set's Provision creates its tables, queues and
//     container, idempotently, with every create's reply lost.
//   - [Inline]: with an inline processor (eventual.NewInline) the remote
//     indexes are exact as soon as each write returns, with no worker,
//     and no outbox intent is left.
//
// It is imported by tests only, and imports entity, integration,
// patterns/eventual and patterntest, so it lives under patterntest, the
// patterns' test kit (see internal/layers).
package indextest

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/patterns/drift"
	"github.com/tablekit/tablekit/patterns/eventual"
)

// Placement is where a layout keeps the index's entries or lists: the
// placements of both packages, by the same names.
type Placement uint8

const (
	Same  Placement = iota // SamePartition
	Other                  // OtherPartition
	Wide                   // TableWide
	Blob                   // Blob (indexentity)
)

func (p Placement) String() string {
	return [...]string{"same", "other", "wide", "blob"}[p]
}

// Layout is how a Set lays out the index "status".
type Layout struct {
	Placement Placement
	// Buckets is a Wide index's Index.Buckets; 0 means the package's
	// default.
	Buckets int
	// Unique makes the index unique (secondaryindex).
	Unique bool
	// Properties are the properties an entry copies (secondaryindex's
	// Index.Properties); nil means all.
	Properties []string
	// Entries puts the index entities of Other and Wide layouts in the
	// store's entries table (Config.Entries), and gives a Set of any
	// placement that table.
	Entries bool
}

func (l Layout) String() string {
	s := l.Placement.String()
	if l.Buckets != 0 {
		s += strconv.Itoa(l.Buckets)
	}
	if l.Unique {
		s += "-unique"
	}
	if l.Properties != nil {
		s += "-props(" + strings.Join(l.Properties, ",") + ")"
	}
	if l.Entries {
		s += "-entries"
	}
	return s
}

// Store is the tables (and container) of one run of a scenario.
type Store struct {
	Primaries *entity.Table[entity.DynamicEntity]
	// Entries is a second table, for layouts with Entries.
	Entries *entity.Table[entity.DynamicEntity]
	// Container is for Blob layouts (nil when the adapter has none).
	Container *container.Client
}

// Set is what a scenario does with a package's Set of orders.
type Set interface {
	Insert(ctx context.Context, e *entity.DynamicEntity) error
	Modify(ctx context.Context, pk, rk string, change func(*entity.DynamicEntity) error) error
	// ModifyWith is Modify with options (Create, Retry).
	ModifyWith(ctx context.Context, pk, rk string, change func(*entity.DynamicEntity) error, opts entity.ModifyOptions) error
	// InsertWith is Insert committing the caller's messages
	// (WriteOptions.Messages).
	InsertWith(ctx context.Context, e *entity.DynamicEntity, msgs []eventual.Message) error
	Delete(ctx context.Context, pk, rk string) error
	Check(ctx context.Context) iter.Seq2[drift.Finding, error]
	// Provision creates the Set's tables, queues and container.
	Provision(ctx context.Context) error
	Rebuild(ctx context.Context) (drift.Summary, error)
	// Listed returns the keys of the orders the index lists under value,
	// as it stores them, without reading the orders: of partition pk, or,
	// for a Wide layout (pk ""), of the whole table.
	Listed(ctx context.Context, pk, value string) ([]drift.Key, error)
	// Found is Listed through a lookup that reads each order and keeps
	// those holding value.
	Found(ctx context.Context, pk, value string) ([]drift.Key, error)
}

// Adapter is what the scenarios need of an index package.
type Adapter struct {
	// Env is the package's Azurite (its TestMain's).
	Env *integration.Env
	// Placements are the placements the package has.
	Placements []Placement
	// Unique and Copies say whether the package has unique indexes and
	// entries that copy properties (Layout.Unique, Layout.Properties).
	Unique, Copies bool
	// MaxMessages is the package's MaxMessages: the most messages of the
	// caller one write of a Set without SamePartition indexes commits.
	MaxMessages int
	// Open returns a Set of store laid out as l, its clients made from e,
	// with PrimaryPrefix "order_", a Retry policy for hot lists, and
	// Config.Processor p (for every layout: a Same one keeps an outbox).
	Open func(t testing.TB, e *integration.Env, store Store, l Layout, p *eventual.Processor) Set
}

func (a *Adapter) has(l Layout) bool {
	return a.hasPlacement(l.Placement) && (!l.Unique || a.Unique) && (l.Properties == nil || a.Copies)
}

func (a *Adapter) hasPlacement(p Placement) bool {
	for _, x := range a.Placements {
		if x == p {
			return true
		}
	}
	return false
}

// PK is the PartitionKey of the i-th partition of orders.
func PK(i int) string { return "c" + strconv.Itoa(i) }

// RK is the RowKey of order i.
func RK(i int) string { return fmt.Sprintf("order_%03d", i) }

// Order is order i of partition pk holding status.
func Order(pk string, i int, status string) *entity.DynamicEntity {
	return &entity.DynamicEntity{PartitionKey: pk, RowKey: RK(i), Properties: map[string]any{
		"Status": status,
		"Number": int64(1000 + i),
		"Note":   "order " + strconv.Itoa(i),
	}}
}

// Status is an order's indexed value: its Status property, when it is a
// non-empty string.
func Status(e *entity.DynamicEntity) (string, bool) {
	s, ok := e.Properties["Status"].(string)
	return s, ok && s != ""
}
