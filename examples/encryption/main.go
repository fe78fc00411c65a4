// Command encryption runs the client-side encryption step of the tour
// (design guide §4): encrypted and signed properties, tampering caught, a
// beacon filter and a key rotation, against a private Azurite it starts —
// or, when TABLEKIT_CONNECTION_STRING (or TABLEKIT_ACCOUNT_URL) is set,
// against that account.
//
//	go run ./examples/encryption
package main

import (
	"github.com/tablekit/tablekit/examples/demo"
	"github.com/tablekit/tablekit/examples/encryption/tour"
)

func main() { demo.Main("encryption example", tour.Tour) }
