// Command logtail keeps each user's login attempts as a log, newest first,
// written by several servers at once and read with one request: the design
// guide's log tail pattern (§6.7), package patterns/logtail.
//
// It runs on the storage account the environment names, creates the table
// LoginAttempts if it does not exist, and leaves what it wrote there:
//
//	export TABLEKIT_CONNECTION_STRING='UseDevelopmentStorage=true' # Azurite on its default ports
//	go run ./examples/logtail
//
// Keys come from the clock at the moment of the append: a client that
// resends an attempt gets a second entry. For events that carry their own
// time and must be stored once however often they are sent, see
// examples/compound.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// Names are the storage resources the program uses; run creates them if
// they do not exist.
type Names struct {
	Attempts string // table
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	acct, err := account.FromEnvironment(nil)
	if err == nil {
		err = run(ctx, acct, Names{Attempts: "LoginAttempts"}, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "logtail example:", err)
		os.Exit(1)
	}
}

// LoginAttempt is one attempt to log in; a user's attempts are the
// partition named after the user, the RowKey is the log's.
type LoginAttempt struct {
	PartitionKey string
	RowKey       string
	Server       string
	IP           string
	OK           bool
}

// start is when the story begins. The servers' clocks are simulated so that
// every run prints the same keys; a service leaves logtail.Config.Now nil.
var start = time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)

// run tells the story on acct, in the resources names gives, to out.
func run(ctx context.Context, acct *account.Account, names Names, out io.Writer) error {
	// The meter counts what each step costs; a service gives one to
	// account in main, or none.
	meter := cost.NewMeter()
	acct, err := acct.WithOptions(func(o *account.Options) { o.Meter = meter })
	if err != nil {
		return err
	}
	tables, err := acct.TableService()
	if err != nil {
		return err
	}
	attempts, err := entity.NewTableFromService[LoginAttempt](tables, names.Attempts)
	if err != nil {
		return err
	}
	if err := attempts.Provision(ctx); err != nil { // the table, unless it exists
		return err
	}
	fmt.Fprintln(out, "== logtail: a user's login attempts, newest first (design guide §6.7)")

	// 1. Three servers log alice's attempts at once, each through a Log of
	// its own (a writer id of its own), 12 attempts a minute apart.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for s := range 3 {
		server := fmt.Sprintf("web%d", s+1)
		l, err := logtail.New(attempts, logtail.Config{WriterID: server, Now: minutes(start.Add(time.Duration(s) * 10 * time.Second))})
		if err != nil {
			return err
		}
		wg.Go(func() {
			for i := range 12 {
				a := &LoginAttempt{Server: server, IP: fmt.Sprintf("10.0.%d.%d", s+1, i+1), OK: i%4 == 3}
				if errs[s] = l.Append(ctx, "alice", a); errs[s] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintln(out, "Three servers logged 12 attempts each for alice, at once, into partition \"alice\": one upsert each.")

	reader, err := logtail.New(attempts, logtail.Config{})
	if err != nil {
		return err
	}
	// 2. The five newest: one request.
	before := meter.Snapshot()
	tail, err := reader.Tail(ctx, "alice", 5)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Tail(5) took %d storage transaction ($top=5), newest first:\n", meter.Snapshot().Sub(before).Total())
	for _, a := range tail {
		k, err := logtail.ParseKey(a.RowKey)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "   %s  %-4s  %-9s  ok=%-5v  RowKey %s\n", k.Time.Format("15:04:05"), a.Server, a.IP, a.OK, a.RowKey)
	}

	// 3. A time range, and pages toward older attempts with a token that a
	// browser could keep in its "older" link.
	n := 0
	for _, err := range reader.Since(ctx, "alice", start.Add(10*time.Minute)) {
		if err != nil {
			return err
		}
		n++
	}
	fmt.Fprintf(out, "Since 09:10: %d attempts (one RowKey range query).\n", n)
	var sizes []int
	token := ""
	for {
		page, err := reader.Page(ctx, "alice", 10, token)
		if err != nil {
			return err
		}
		sizes = append(sizes, len(page.Items))
		if page.Next == "" {
			break
		}
		token = page.Next
	}
	fmt.Fprintf(out, "Paged 10 at a time, older and older: pages of %v.\n", sizes)

	// 4. A key comes from the clock at the append, not from the attempt: a
	// resend is a new entry.
	resend, err := logtail.New(attempts, logtail.Config{WriterID: "web1", Now: minutes(start.Add(12*time.Minute + 30*time.Second))})
	if err != nil {
		return err
	}
	again := tail[len(tail)-1]
	again.RowKey = ""
	if err := resend.Append(ctx, "alice", &again); err != nil {
		return err
	}
	dup := 0
	for a, err := range reader.Since(ctx, "alice", start) {
		if err != nil {
			return err
		}
		if a.IP == again.IP {
			dup++
		}
	}
	fmt.Fprintf(out, "web1 resent the attempt from %s: the log now holds it %d times.\n", again.IP, dup)

	// 5. Retention: attempts before 09:06 go, in delete transactions.
	before = meter.Snapshot()
	removed, err := reader.Trim(ctx, "alice", start.Add(6*time.Minute))
	if err != nil {
		return err
	}
	used := meter.Snapshot().Sub(before)
	left, err := reader.Tail(ctx, "alice", 1000)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Trim(before 09:06) removed %d attempts (%v); %d left.\n", removed, used, len(left))
	return nil
}

// minutes returns a clock that reads from, then a minute later at every
// reading.
func minutes(from time.Time) func() time.Time {
	var mu sync.Mutex
	next := from
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t := next
		next = next.Add(time.Minute)
		return t
	}
}
