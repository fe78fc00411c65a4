// Command denormalize runs the denormalize step of the tour: the design
// guide's department that keeps its manager's name and phone (§6.5), in
// the manager's transaction and, for a directory in another table and the
// employees' cost centers, through a queue — against a private Azurite it
// starts, or, when TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is
// set, against that account.
//
//	go run ./examples/denormalize
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/denormalize/tour"
)

func main() { demo.Main("denormalize example", tour.Tour) }
