// Package tour is the log tail step of tablekit's tour: the login attempts
// of a user, written by several servers at once into one log partition,
// read newest first with one request, paged toward older ones and trimmed
// (design guide §6.7).
package tour

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// LoginAttempt is one attempt to log in; a user's attempts are the
// partition named after the user.
type LoginAttempt struct {
	PartitionKey string
	RowKey       string
	Server       string
	IP           string
	OK           bool
}

// start is when the story begins: the servers' clocks are simulated so
// that the output is the same on every run.
var start = time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)

// Tour creates its own uniquely named table, runs the login-attempts story
// against it, printing what happens to out, and deletes the table.
func Tour(ctx context.Context, env *demo.Env, out io.Writer) (err error) {
	meter := cost.NewMeter()
	client, drop, err := env.With(meter.Policy()).ScratchTable(ctx, "logtailtour")
	if err != nil {
		return err
	}
	defer func() {
		if derr := drop(); derr != nil {
			err = errors.Join(err, derr)
		} else {
			fmt.Fprintln(out, "Deleted the table.")
		}
	}()
	attempts, err := entity.NewTable[LoginAttempt](client)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "== logtail: a user's login attempts, newest first (design guide §6.7)")

	// 1. Three servers log alice's attempts at once, each through a Log of
	// its own (a writer id of its own), 12 attempts a minute apart.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for s := range 3 {
		server := fmt.Sprintf("web%d", s+1)
		clock := minutes(start.Add(time.Duration(s) * 10 * time.Second))
		l, err := logtail.New(attempts, logtail.Config{WriterID: server, Now: clock})
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 12 {
				a := &LoginAttempt{Server: server, IP: fmt.Sprintf("10.0.%d.%d", s+1, i+1), OK: i%4 == 3}
				if errs[s] = l.Append(ctx, "alice", a); errs[s] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintln(out, "Three servers logged 12 attempts each for alice, at once, into partition \"alice\".")
	fmt.Fprintf(out, "The guide's C# key of 09:00:00, (DateTime.MaxValue.Ticks - t.Ticks).ToString(\"D19\"): %s\n", keys.InvertedTicks(start))

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

	// 4. Retention: attempts before 09:06 go, in delete transactions.
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
