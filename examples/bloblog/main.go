// Command bloblog runs the bloblog step of the tour: the design guide's
// storage log in append blobs (§6.13), against a private Azurite it
// starts — or, when TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is
// set, against that account.
//
//	go run ./examples/bloblog
package main

import (
	"github.com/tablekit/tablekit/examples/bloblog/tour"
	"github.com/tablekit/tablekit/examples/demo"
)

func main() { demo.Main("bloblog example", tour.Tour) }
