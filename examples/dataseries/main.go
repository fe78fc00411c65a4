// Command dataseries runs the data series step of the tour: 24 hourly
// counters in one entity, incremented by concurrent writers and read with
// one point query (design guide §6.9), against a private Azurite it starts —
// or, when TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is set,
// against that account.
//
//	go run ./examples/dataseries
package main

import (
	"github.com/tablekit/tablekit/examples/dataseries/tour"
	"github.com/tablekit/tablekit/examples/demo"
)

func main() { demo.Main("dataseries example", tour.Tour) }
