package backup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// annotation is the suffix of a property's type annotation.
const annotation = "@odata.type"

// edmType reports whether a backup's annotation may name t.
func edmType(t []byte) bool {
	switch string(t) {
	case "Edm.String", "Edm.Int32", "Edm.Int64", "Edm.Double", "Edm.Boolean", "Edm.DateTime", "Edm.Guid", "Edm.Binary":
		return true
	}
	return false
}

// checkMembers checks what entity.Unmarshal, which reads the service's
// replies and tolerates their quirks, lets through in a backup's line
// although no export writes it, and which would store another entity than
// the one backed up: a line without its PartitionKey or RowKey, or with
// null for one (which would become the empty key), a member twice (which
// value counts is the reader's guess), an annotation that names no EDM type
// (the value would be taken as a String) or annotates no property. b is a
// line entity.Unmarshal decoded. It allocates little: names are slices of
// b unless escaped.
func checkMembers(b []byte) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errors.New("not a JSON object")
	}
	i = skipSpace(b, i+1)
	var buf [32][]byte
	names := buf[:0]
	var notes [][2][]byte // property, type
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
		prop, annotates := bytes.CutSuffix(name, []byte(annotation))
		if i < len(b) && b[i] == '"' {
			if !annotates {
				// A value: only its end matters.
				if i, err = skipString(b, i); err != nil {
					return err
				}
			} else {
				var v []byte
				if v, i, err = readString(b, i); err != nil {
					return err
				}
				notes = append(notes, [2][]byte{prop, v})
			}
		} else {
			if string(name) == "PartitionKey" || string(name) == "RowKey" {
				// null would read as the empty key.
				return fmt.Errorf("%s is not a string", name)
			}
			if annotates {
				return fmt.Errorf("annotation %q is not a string", name)
			}
			start := i
		scan:
			for ; i < len(b); i++ {
				switch b[i] {
				case ',', '}', ' ', '\t', '\r', '\n':
					break scan
				case '{', '[':
					return fmt.Errorf("member %q holds an object or array", name)
				}
			}
			if i == start {
				return fmt.Errorf("member %q has no value", name)
			}
		}
		names = append(names, name)
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	slices.SortFunc(names, bytes.Compare)
	for k := 1; k < len(names); k++ {
		if bytes.Equal(names[k], names[k-1]) {
			return fmt.Errorf("member %q twice", names[k])
		}
	}
	for _, key := range []string{"PartitionKey", "RowKey"} {
		if _, found := slices.BinarySearchFunc(names, []byte(key), bytes.Compare); !found {
			return fmt.Errorf("no %s member", key)
		}
	}
	for _, n := range notes {
		if !edmType(n[1]) {
			return fmt.Errorf("property %q is annotated %q, not one of the eight EDM types", n[0], n[1])
		}
		if _, found := slices.BinarySearchFunc(names, n[0], bytes.Compare); !found {
			return fmt.Errorf("annotation %q has no property %q", string(n[0])+annotation, n[0])
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

// skipString returns the index after the JSON string at b[i].
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return j + 1, nil
		case '\\':
			j++ // the escaped byte
		}
	}
	return len(b), fmt.Errorf("at byte %d: unterminated string", i)
}

// readString reads the JSON string at b[i] and returns its text (a slice
// of b unless it holds escapes) and the index after its closing quote.
func readString(b []byte, i int) ([]byte, int, error) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, fmt.Errorf("at byte %d: expected a string", i)
	}
	j := i + 1
	for k := j; k < len(b) && b[k] != '\\'; k++ {
		if b[k] == '"' {
			return b[j:k], k + 1, nil
		}
	}
	for ; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			var s string
			if err := json.Unmarshal(b[i:j+1], &s); err != nil {
				return nil, j + 1, fmt.Errorf("at byte %d: %w", i, err)
			}
			return []byte(s), j + 1, nil
		}
	}
	return nil, len(b), fmt.Errorf("at byte %d: unterminated string", i)
}
