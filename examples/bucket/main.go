// Command bucket runs the bucket step of the tour: a day's events spread
// over partitions so that no partition is hot, read back merged (design
// guide §6.12), against a private Azurite it starts — or, when
// TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is set, against that
// account.
//
//	go run ./examples/bucket
package main

import (
	"github.com/tablekit/tablekit/examples/bucket/tour"
	"github.com/tablekit/tablekit/examples/demo"
)

func main() { demo.Main("bucket example", tour.Tour) }
