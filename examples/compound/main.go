// Command compound runs the compound-key step of the tour: the design
// guide's yearly reviews of each employee under compound RowKeys (§6.6),
// against a private Azurite it starts, or, when TABLEKIT_CONNECTION_STRING
// (or TABLEKIT_ACCOUNT_URL) is set, against that account.
//
//	go run ./examples/compound
package main

import (
	"github.com/tablekit/tablekit/examples/compound/tour"
	"github.com/tablekit/tablekit/examples/demo"
)

func main() { demo.Main("compound example", tour.Tour) }
