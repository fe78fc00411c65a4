// Command wide runs the wide-entities step of the tour: an employee with
// 1,000 skill ratings, more properties than one entity may hold, stored as
// several rows of one partition (design guide §6.10), against a private
// Azurite it starts — or, when TABLEKIT_CONNECTION_STRING (or
// TABLEKIT_ACCOUNT_URL) is set, against that account.
//
//	go run ./examples/wide
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/wide/tour"
)

func main() { demo.Main("wide example", tour.Tour) }
