// Command rotation runs the rotation step of the tour: the design guide's
// login attempts in a table per day (§6.8), against a private Azurite it
// starts — or, when TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is
// set, against that account.
//
//	go run ./examples/rotation
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/rotation/tour"
)

func main() { demo.Main("rotation example", tour.Tour) }
