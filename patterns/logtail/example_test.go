package logtail_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/logtail"
)

// LoginAttempt is one login attempt of a user: the log of a user is the
// partition named after the user.
type LoginAttempt struct {
	PartitionKey string
	RowKey       string
	IP           string
	OK           bool
}

func exampleTable() (*entity.Table[LoginAttempt], func()) {
	ctx := context.Background()
	name := "logtail" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	_, _ = env.TableService.CreateTable(ctx, name, nil)
	tbl, _ := entity.NewTableFromService[LoginAttempt](env.TableService, name)
	return tbl, func() { _, _ = env.TableService.DeleteTable(ctx, name, nil) }
}

func Example() {
	ctx := context.Background()
	attempts, drop := exampleTable()
	defer drop()

	// A clock that reads 09:00, 09:01, … so the output is stable.
	start := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	log, err := logtail.New(attempts, logtail.Config{Now: stepClock(start, time.Minute)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"} {
		if err := log.Append(ctx, "alice", &LoginAttempt{IP: ip, OK: ip == "10.0.0.4"}); err != nil {
			fmt.Println(err)
			return
		}
	}

	last2, err := log.Tail(ctx, "alice", 2) // one request: $top=2
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range last2 {
		k, _ := logtail.ParseKey(a.RowKey)
		fmt.Println(k.Time.Format("15:04"), a.IP, a.OK)
	}

	removed, err := log.Trim(ctx, "alice", start.Add(2*time.Minute)) // before 09:02
	fmt.Println("trimmed", removed, err)
	for a, err := range log.Since(ctx, "alice", start) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("left:", a.IP)
	}
	// Output:
	// 09:03 10.0.0.4 true
	// 09:02 10.0.0.3 false
	// trimmed 2 <nil>
	// left: 10.0.0.4
	// left: 10.0.0.3
}
