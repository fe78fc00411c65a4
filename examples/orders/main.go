// Command orders is an order service that combines patterns. Orders live
// in their customer's partition, newest first, keyed by their own time and
// number (keys.Compound(keys.InvertedTicks(placed), number)); two table-wide
// secondary indexes answer "order 10042" and "every pending order" without
// knowing the customer (patterns/secondaryindex, kept by a queue's worker);
// delivering an order archives it through the queue with its index entries
// (patterns/eventual, Set.MoveTo); every change writes an audit entry to a
// log tail (patterns/logtail). The change, its index messages, the archive
// message and the audit message commit in one transaction, or none.
//
// It runs on the storage account the environment names, creates the tables
// Orders, OrderIndex, OrderArchive and OrderAudit and the queue order-work
// (with its poison queue) if they do not exist, and leaves what it wrote
// there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/orders
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/patterns/logtail"
	"github.com/tablekit/tablekit/patterns/secondaryindex"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Orders, Index, Archive, Audit string // tables
	Work                          string // queue, and its poison queue Work + "-poison"
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Orders: "Orders", Index: "OrderIndex", Archive: "OrderArchive", Audit: "OrderAudit", Work: "order-work"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "orders example:", err)
		os.Exit(1)
	}
}

// Order is one order, in its customer's partition. Its RowKey puts a
// customer's newest order first: the inverted ticks of the time the order
// was placed — its own time, which may be in the past (an import, a
// back-dated order) — and its number, which makes the key unique.
type Order struct {
	Customer string `table:"PartitionKey,pk"`
	Key      string `table:"RowKey,rk"`
	ETag     string `table:",etag"`
	Number   string
	Status   string
	Placed   time.Time
	Cents    int64
}

// orderKey is the RowKey of an order placed at placed with this number:
// the instant newest first, then the number that tells apart two orders of
// one instant (a back-dated import puts many at midnight).
func orderKey(placed time.Time, number string) string {
	return keys.Compound(keys.InvertedTicks(placed), number)
}

// Statuses of an order.
const (
	Pending   = "pending"
	Shipped   = "shipped"
	Delivered = "delivered"
)

// Audit is one entry of a customer's audit log, newest first.
type Audit struct {
	PartitionKey string // the customer
	RowKey       string // set by the handler: the message's time and id
	Number       string
	Event        string
}

// The messages a change of an order commits with it.
type (
	// ArchiveOrder moves a delivered order to the archive table.
	ArchiveOrder struct{ Customer, Key string }
	// AuditEvent records what happened to an order.
	AuditEvent struct{ Customer, Number, Event string }
)

var (
	archiveKind = eventual.NewKind[ArchiveOrder]("orders.ArchiveOrder.v1")
	auditKind   = eventual.NewKind[AuditEvent]("orders.AuditEvent.v1")
)

// service is the order service: its tables, its Set of orders with their
// indexes, the audit log and the processor that runs the queue's work.
type service struct {
	table   *entity.Table[Order] // read directly; written only through orders
	orders  *secondaryindex.Set[Order]
	archive *entity.Table[Order]
	audit   *logtail.Log[Audit]
	p       *eventual.Processor
}

// indexes are the two table-wide indexes of orders: by number (unique: one
// order per number in the whole table) and by status, copying what a list
// of orders shows. All the entries of one status share a partition (its
// bucket), about 2,000 writes/s: a service with more pending orders than
// that puts a bucket of the order's key in the value ("pending_3") and
// looks up each.
func indexes() []secondaryindex.Index[Order] {
	return []secondaryindex.Index[Order]{
		{
			Name:      "number",
			Key:       func(o *Order) (string, bool) { return o.Number, o.Number != "" },
			Unique:    true,
			Placement: secondaryindex.TableWide,
		},
		{
			Name:       "status",
			Key:        func(o *Order) (string, bool) { return o.Status, o.Status != "" },
			Properties: []string{"Number", "Status", "Placed", "Cents"},
			Placement:  secondaryindex.TableWide,
		},
	}
}

// newService wires the service on acct, creating the tables and queues
// names gives if they do not exist.
func newService(ctx context.Context, acct *account.Account, names Names) (*service, error) {
	tables, err := acct.TableService()
	if err != nil {
		return nil, err
	}
	queues, err := acct.QueueService()
	if err != nil {
		return nil, err
	}
	orders, err := entity.NewTableFromService[Order](tables, names.Orders)
	if err != nil {
		return nil, err
	}
	entries, err := entity.NewTableFromService[entity.DynamicEntity](tables, names.Index)
	if err != nil {
		return nil, err
	}
	archive, err := entity.NewTableFromService[Order](tables, names.Archive)
	if err != nil {
		return nil, err
	}
	auditTable, err := entity.NewTableFromService[Audit](tables, names.Audit)
	if err != nil {
		return nil, err
	}
	audit, err := logtail.New(auditTable, logtail.Config{})
	if err != nil {
		return nil, err
	}
	// A message whose worker vanished (or whose delete's reply was lost)
	// comes back after 5 s: the handlers here take milliseconds.
	p, err := eventual.New(eventual.QueuesOf(queues, names.Work), nil, eventual.Config{VisibilityTimeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	// Every table and queue of the service, unless it exists: one call.
	if err := account.Provision(ctx, orders, entries, archive, audit, p); err != nil {
		return nil, err
	}
	set, err := secondaryindex.New(orders, secondaryindex.Config{Processor: p, Entries: entries}, indexes()...)
	if err != nil {
		return nil, err
	}
	s := &service{table: orders, orders: set, archive: archive, audit: audit, p: p}
	// Archiving is the Set's MoveTo: the order goes to the archive, and
	// its index entries with it. eventual.Move would leave the entries
	// behind, pointing at nothing.
	if err := eventual.Handle(p, archiveKind, func(ctx context.Context, m ArchiveOrder) error {
		return s.orders.MoveTo(ctx, m.Customer, m.Key, s.archive)
	}, eventual.HandleOptions{}); err != nil {
		return nil, err
	}
	// An audit entry is written once per message, also when the message
	// is delivered twice: an upsert under a key made from the message —
	// the log's own key shape (logtail's doc, Ownership), with the message's
	// time, sequence 0 and a writer id hashed from the message's id, which
	// Tail, ParseKey and Trim read as any entry. Log.Append would write a
	// new key at every delivery.
	if err := eventual.Handle(p, auditKind, func(ctx context.Context, m AuditEvent) error {
		d, _ := eventual.DeliveryFrom(ctx)
		sum := sha256.Sum256([]byte(d.ID))
		rk := keys.InvertedTicksSeq(d.Created, 0) + "_" + hex.EncodeToString(sum[:16])
		return eventual.Upsert(ctx, auditTable, &Audit{PartitionKey: m.Customer, RowKey: rk, Number: m.Number, Event: m.Event})
	}, eventual.HandleOptions{}); err != nil {
		return nil, err
	}
	return s, nil
}

// auditMessage is the audit message of an order's event. Its ID is made
// from the order and the event, so that a call repeated after an unknown
// outcome sends the same message, which counts once.
func auditMessage(o *Order, event string) (eventual.Message, error) {
	m, err := auditKind.Message(AuditEvent{Customer: o.Customer, Number: o.Number, Event: event})
	if err != nil {
		return m, err
	}
	m.ID = "audit-" + o.Number + "-" + event
	return m, nil
}

// Place stores a new order with its audit message, in one transaction.
func (s *service) Place(ctx context.Context, o *Order) error {
	o.Key = orderKey(o.Placed, o.Number)
	o.Status = Pending
	m, err := auditMessage(o, "placed")
	if err != nil {
		return err
	}
	return s.orders.Insert(ctx, o, secondaryindex.WriteOptions{Messages: []eventual.Message{m}})
}

// Advance moves the order o, as read, to its next status; a delivered
// order is archived. The change, its index messages, the audit message and
// the archive message commit together. The messages are made from o
// before the write, so the change refuses an order whose status changed
// since it was read.
func (s *service) Advance(ctx context.Context, o Order) (Order, error) {
	next := map[string]string{Pending: Shipped, Shipped: Delivered}[o.Status]
	if next == "" {
		return o, fmt.Errorf("order %s is %s already", o.Number, o.Status)
	}
	audit, err := auditMessage(&o, next)
	if err != nil {
		return o, err
	}
	msgs := []eventual.Message{audit}
	if next == Delivered {
		archive, err := archiveKind.Message(ArchiveOrder{Customer: o.Customer, Key: o.Key})
		if err != nil {
			return o, err
		}
		archive.ID = "archive-" + o.Number
		msgs = append(msgs, archive)
	}
	return s.orders.Modify(ctx, o.Customer, o.Key, func(cur *Order) error {
		if cur.Status != o.Status {
			return fmt.Errorf("order %s changed to %s meanwhile", o.Number, cur.Status)
		}
		cur.Status = next
		return nil
	}, entity.ModifyOptions{}, secondaryindex.WriteOptions{Messages: msgs})
}

// run tells the story on acct, in the resources names gives, to out.
func run(ctx context.Context, acct *account.Account, names Names, out io.Writer) error {
	s, err := newService(ctx, acct, names)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "== orders: an order service combining patterns (design guide §6.2, §6.3, §6.7)")
	return story(ctx, s, out)
}

func story(ctx context.Context, s *service, out io.Writer) error {
	day := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	orders := []Order{
		{Customer: "contoso", Number: "10040", Placed: day, Cents: 1999},
		{Customer: "fabrikam", Number: "10041", Placed: day.Add(time.Hour), Cents: 4500},
		{Customer: "contoso", Number: "10042", Placed: day.Add(2 * time.Hour), Cents: 12000},
		// Back-dated: entered today, placed two days earlier. Its key is
		// made from its own time, so it sorts where it belongs.
		{Customer: "contoso", Number: "10039", Placed: day.Add(-48 * time.Hour), Cents: 700},
	}
	for i := range orders {
		if err := s.Place(ctx, &orders[i]); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Placed %d orders for 2 customers; each Insert is one transaction: the order, and the outbox messages of its index entries and its audit entry.\n", len(orders))
	if err := drain(ctx, s, out); err != nil {
		return err
	}

	// A customer's orders, newest first: one range query in one partition.
	fmt.Fprint(out, "contoso's orders, newest first:")
	for o, err := range s.table.Query(ctx, entity.Query{Filter: filter.PK("contoso")}) {
		if err != nil {
			return err
		}
		fmt.Fprintf(out, " %s (%s)", o.Number, o.Placed.Format("Jan 2 15:04"))
	}
	fmt.Fprintln(out)

	// Order 10042, without knowing its customer: one point read of the
	// entry, one of the order (Verify).
	o, err := s.orders.LookupValue(ctx, "number", "10042", secondaryindex.LookupOptions{Verify: true})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Order 10042, found table-wide: customer %s, %s, %d.%02d, status %s.\n", o.Customer, o.Placed.Format("Jan 2 15:04"), o.Cents/100, o.Cents%100, o.Status)
	dup := Order{Customer: "fabrikam", Number: "10042", Placed: day, Cents: 1}
	var ue *secondaryindex.UniqueError
	if err := s.Place(ctx, &dup); !errors.As(err, &ue) {
		return fmt.Errorf("a second order 10042 was not refused: %v", err)
	}
	fmt.Fprintf(out, "A second order 10042, for fabrikam, is refused: %v\n", ue)

	if err := listPending(ctx, s, out); err != nil {
		return err
	}

	// Ship 10040, ship and deliver 10042: each change commits its audit
	// message (and, on delivery, the archive message) with it.
	for _, number := range []string{"10040", "10042", "10042"} {
		o, err := s.orders.LookupValue(ctx, "number", number, secondaryindex.LookupOptions{Verify: true})
		if err != nil {
			return err
		}
		got, err := s.Advance(ctx, o)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Order %s is now %s.\n", got.Number, got.Status)
	}
	if err := drain(ctx, s, out); err != nil {
		return err
	}
	if err := listPending(ctx, s, out); err != nil {
		return err
	}
	if _, err := s.orders.LookupValue(ctx, "number", "10042", secondaryindex.LookupOptions{}); !errors.Is(err, entity.ErrNotFound) {
		return fmt.Errorf("order 10042 still has its entry after archiving: %v", err)
	}
	archived, err := s.archive.Get(ctx, "contoso", orderKey(day.Add(2*time.Hour), "10042"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Order 10042 was delivered and archived by the queue's worker with its entries: the number lookup finds nothing, the archive holds it (%s).\n", archived.Status)

	// The audit log: a customer's last events, newest first, one query.
	events, err := s.audit.Tail(ctx, "contoso", 10)
	if err != nil {
		return err
	}
	var lines []string
	for _, e := range events {
		lines = append(lines, e.Number+" "+e.Event)
	}
	fmt.Fprintf(out, "contoso's audit log, newest first: %s.\n", strings.Join(lines, ", "))

	// Nothing drifted: every order has exactly its entries.
	n := 0
	for f, err := range s.orders.Check(ctx, secondaryindex.CheckOptions{}) {
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Check: %v\n", f)
		n++
	}
	if n != 0 {
		return fmt.Errorf("check found %d findings", n)
	}
	fmt.Fprintln(out, "Check read every order and every entry: no drift.")
	return nil
}

// listPending prints every pending order, whatever its customer: one range
// query of the status index's bucket that holds "pending".
func listPending(ctx context.Context, s *service, out io.Writer) error {
	var numbers []string
	for o, err := range s.orders.LookupValueAll(ctx, "status", Pending, secondaryindex.LookupOptions{}) {
		if err != nil {
			return err
		}
		numbers = append(numbers, o.Number+" ("+o.Customer+")")
	}
	fmt.Fprintf(out, "Pending orders, table-wide: %s.\n", strings.Join(numbers, ", "))
	return nil
}

// drain runs the queue's work until nothing is left: index entries,
// audit entries, archiving.
func drain(ctx context.Context, s *service, out io.Writer) error {
	dctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	r, err := s.p.Drain(dctx)
	if err != nil {
		return fmt.Errorf("%w (%+v)", err, r)
	}
	fmt.Fprintf(out, "The worker drained the queue: %d messages done, %d poisoned.\n", r.Done, r.Poisoned)
	if r.Poisoned != 0 {
		return fmt.Errorf("%d messages poisoned", r.Poisoned)
	}
	return nil
}
