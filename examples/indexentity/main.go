// Command indexentity runs the indexentity step of the tour: the design
// guide's index entities (§6.4), "all employees named Jones", with the
// three places a list can live, against a private Azurite it starts — or,
// when TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is set,
// against that account.
//
//	go run ./examples/indexentity
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/indexentity/tour"
)

func main() { demo.Main("indexentity example", tour.Tour) }
