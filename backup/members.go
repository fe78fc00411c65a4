package backup

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// annotation is the suffix of a property's type annotation.
const annotation = "@odata.type"

// edmTypes are the types a backup's annotations may name.
var edmTypes = []string{"Edm.String", "Edm.Int32", "Edm.Int64", "Edm.Double", "Edm.Boolean", "Edm.DateTime", "Edm.Guid", "Edm.Binary"}

// checkMembers checks what entity.Unmarshal, which reads the service's
// replies and tolerates their quirks, lets through in a backup's line
// although no export writes it, and which would store another entity than
// the one backed up: a line without its PartitionKey or RowKey, or with
// null for one (which would become the empty key), a member twice (which value
// counts is the reader's guess), an annotation that names no EDM type
// (the value would be taken as a String) or annotates no property. b is a
// line entity.Unmarshal decoded.
func checkMembers(b []byte) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errors.New("not a JSON object")
	}
	i = skipSpace(b, i+1)
	var names []string
	var notes [][2]string // property, type
	for i < len(b) && b[i] != '}' {
		name, j, err := readString(b, i)
		if err != nil {
			return err
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return fmt.Errorf("member %q has no value", name)
		}
		i = skipSpace(b, i+1)
		start := i
		if i < len(b) && b[i] == '"' {
			var v string
			if v, i, err = readString(b, i); err != nil {
				return err
			}
			if prop, ok := strings.CutSuffix(name, annotation); ok {
				notes = append(notes, [2]string{prop, v})
			}
		} else {
			if name == "PartitionKey" || name == "RowKey" {
				// null would read as the empty key.
				return fmt.Errorf("%s is not a string", name)
			}
			for i < len(b) && !strings.ContainsRune(",} \t\r\n", rune(b[i])) {
				if b[i] == '{' || b[i] == '[' {
					return fmt.Errorf("member %q holds an object or array", name)
				}
				i++
			}
			if i == start {
				return fmt.Errorf("member %q has no value", name)
			}
			if strings.HasSuffix(name, annotation) {
				return fmt.Errorf("annotation %q is not a string", name)
			}
		}
		names = append(names, name)
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	slices.Sort(names)
	for k := 1; k < len(names); k++ {
		if names[k] == names[k-1] {
			return fmt.Errorf("member %q twice", names[k])
		}
	}
	for _, key := range []string{"PartitionKey", "RowKey"} {
		if _, found := slices.BinarySearch(names, key); !found {
			return fmt.Errorf("no %s member", key)
		}
	}
	for _, n := range notes {
		if !slices.Contains(edmTypes, n[1]) {
			return fmt.Errorf("property %q is annotated %q, not one of the eight EDM types", n[0], n[1])
		}
		if _, found := slices.BinarySearch(names, n[0]); !found {
			return fmt.Errorf("annotation %q has no property %q", n[0]+annotation, n[0])
		}
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// readString reads the JSON string at b[i] and returns it and the index
// after its closing quote.
func readString(b []byte, i int) (string, int, error) {
	if i >= len(b) || b[i] != '"' {
		return "", i, fmt.Errorf("at byte %d: expected a string", i)
	}
	escaped := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			if !escaped {
				return string(b[i+1 : j]), j + 1, nil
			}
			var s string
			if err := json.Unmarshal(b[i:j+1], &s); err != nil {
				return "", j + 1, fmt.Errorf("at byte %d: %w", i, err)
			}
			return s, j + 1, nil
		}
	}
	return "", len(b), fmt.Errorf("at byte %d: unterminated string", i)
}
