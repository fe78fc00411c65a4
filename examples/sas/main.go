// Command sas runs the shared access signature step of the tour: a server
// that holds the account key gives each user a URL for their own partition
// (design guide §7), against a private Azurite it starts — or, when
// TABLEKIT_CONNECTION_STRING is set, against that account.
//
//	go run ./examples/sas
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/sas/tour"
)

func main() { demo.Main("sas example", tour.Tour) }
