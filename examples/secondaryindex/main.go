// Command secondaryindex runs the secondaryindex step of the tour: the
// design guide's employees found by email and by last name, with the
// indexes in the employee's partition (§6.1) and in other partitions kept
// by a queue (§6.2), a unique email defended, and an index broken by
// hand, checked and rebuilt — against a private Azurite it starts, or,
// when TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is set,
// against that account.
//
//	go run ./examples/secondaryindex
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/secondaryindex/tour"
)

func main() { demo.Main("secondaryindex example", tour.Tour) }
