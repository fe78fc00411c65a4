// Command orders runs the orders step of the tour: an order service that
// combines patterns — orders by customer, newest first; table-wide lookups
// by order number and by status; archiving through a queue with the index
// entries; an audit log — against a private Azurite it starts, or, when
// TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is set, against that
// account.
//
//	go run ./examples/orders
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/orders/tour"
)

func main() { demo.Main("orders example", tour.Tour) }
