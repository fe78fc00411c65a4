package entity

import (
	"time"
)

// EDMType is one of the eight property types of the Table service (design
// guide §1). The wire format names them "Edm.String", "Edm.Int32", and so on.
type EDMType uint8

// The eight EDM property types, in the order the service documents them.
const (
	EDMString EDMType = iota + 1
	EDMInt32
	EDMInt64
	EDMDouble
	EDMBoolean
	EDMDateTime
	EDMGuid
	EDMBinary
)

var edmNames = [...]string{
	EDMString:   "Edm.String",
	EDMInt32:    "Edm.Int32",
	EDMInt64:    "Edm.Int64",
	EDMDouble:   "Edm.Double",
	EDMBoolean:  "Edm.Boolean",
	EDMDateTime: "Edm.DateTime",
	EDMGuid:     "Edm.Guid",
	EDMBinary:   "Edm.Binary",
}

// String returns the wire name, for example "Edm.Int64".
func (t EDMType) String() string {
	if t == 0 || int(t) >= len(edmNames) {
		return "Edm.Unknown"
	}
	return edmNames[t]
}

// parseEDMType maps a wire name to its EDMType; 0 when unknown.
func parseEDMType(name []byte) EDMType {
	// The names are few and short: a switch on the string beats a map.
	switch string(name) {
	case "Edm.String":
		return EDMString
	case "Edm.Int32":
		return EDMInt32
	case "Edm.Int64":
		return EDMInt64
	case "Edm.Double":
		return EDMDouble
	case "Edm.Boolean":
		return EDMBoolean
	case "Edm.DateTime":
		return EDMDateTime
	case "Edm.Guid":
		return EDMGuid
	case "Edm.Binary":
		return EDMBinary
	}
	return 0
}

// Limits of the Table service (design guide §1). They are checked on the
// client before any request is sent.
const (
	// MaxEntitySize is the largest entity, in bytes, by the service's size formula.
	MaxEntitySize = 1 << 20
	// MaxUserProperties is the number of properties an entity may carry besides
	// PartitionKey, RowKey and Timestamp.
	MaxUserProperties = 252
	// MaxPropertyNameLength is the longest property name, in characters.
	MaxPropertyNameLength = 255
	// MaxStringUnits is the longest String property, in UTF-16 code units (64 KiB).
	MaxStringUnits = 32 * 1024
	// MaxBinaryBytes is the longest Binary property, in bytes.
	MaxBinaryBytes = 64 * 1024
)

// DateTime bounds: the service stores DateTime as 100 ns ticks and refuses
// values before 1601-01-01 (the Windows FILETIME epoch).
var (
	minDateTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDateTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)
)

// wireTimeLayout is the DateTime form tablekit writes: UTC, always seven
// fractional digits (100 ns), the form the .NET SDK writes.
const wireTimeLayout = "2006-01-02T15:04:05.0000000Z"
