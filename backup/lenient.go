package backup

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
)

// appendStored appends the backup line of d as entity.Marshal writes it —
// the same bytes for every entity Marshal takes (TestAppendStoredIsMarshal)
// — but without the limits Marshal checks: Export writes with it an entity
// the table holds that breaks one of them (a DateTime before 1601 or a
// property name that is not a C# identifier, which Azurite and Cosmos DB
// store), so that the backup holds every stored entity; Import then reports
// such a line as failed alone, with its line and keys. d comes from a
// query, so its values are of the eight canonical Go types.
func appendStored(b []byte, d *entity.DynamicEntity) ([]byte, error) {
	b = append(b, `{"PartitionKey":`...)
	b = appendString(b, d.PartitionKey)
	b = append(b, `,"RowKey":`...)
	b = appendString(b, d.RowKey)
	names := make([]string, 0, len(d.Properties))
	for n := range d.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		v := d.Properties[name]
		if v == nil {
			continue
		}
		note := func(edm string) {
			b = append(b, ',')
			b = appendString(b, name+annotation)
			b = append(b, ':', '"')
			b = append(b, edm...)
			b = append(b, '"')
		}
		value := func() {
			b = append(b, ',')
			b = appendString(b, name)
			b = append(b, ':')
		}
		switch x := v.(type) {
		case string:
			value()
			b = appendString(b, x)
		case bool:
			value()
			b = strconv.AppendBool(b, x)
		case int32:
			value()
			b = strconv.AppendInt(b, int64(x), 10)
		case int64:
			note("Edm.Int64")
			value()
			b = append(b, '"')
			b = strconv.AppendInt(b, x, 10)
			b = append(b, '"')
		case float64:
			note("Edm.Double")
			value()
			switch {
			case math.IsNaN(x):
				b = append(b, `"NaN"`...)
			case math.IsInf(x, 1):
				b = append(b, `"Infinity"`...)
			case math.IsInf(x, -1):
				b = append(b, `"-Infinity"`...)
			default:
				start := len(b)
				b = strconv.AppendFloat(b, x, 'g', -1, 64)
				if !slices.ContainsFunc(b[start:], func(c byte) bool { return c == '.' || c == 'e' || c == 'E' }) {
					b = append(b, '.', '0')
				}
			}
		case time.Time:
			note("Edm.DateTime")
			value()
			b = append(b, '"')
			b = x.UTC().Truncate(100*time.Nanosecond).AppendFormat(b, "2006-01-02T15:04:05.0000000Z")
			b = append(b, '"')
		case uuid.UUID:
			note("Edm.Guid")
			value()
			b = append(b, '"')
			b = append(b, x.String()...)
			b = append(b, '"')
		case []byte:
			note("Edm.Binary")
			value()
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, x)
			b = append(b, '"')
		default:
			return b, fmt.Errorf("property %q has the Go type %T, not one of the eight EDM types", name, v)
		}
	}
	return append(b, '}'), nil
}

// appendString appends s as a JSON string, escaped as entity.Marshal
// escapes: only what JSON requires, and U+2028 and U+2029; invalid UTF-8
// (which no decoded entity holds) as encoding/json writes it.
func appendString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		q, _ := json.Marshal(s)
		return append(b, q...)
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[s[i+2]&0xF])
			i += 2
			start = i + 1
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
