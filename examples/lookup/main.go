// Command lookup runs the lookup step of the tour: joining in the client
// from a cache of the departments (design guide §5),
// against a private Azurite it starts, or, when TABLEKIT_CONNECTION_STRING
// (or TABLEKIT_ACCOUNT_URL) is set, against that account.
//
//	go run ./examples/lookup
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/lookup/tour"
)

func main() { demo.Main("lookup example", tour.Tour) }
