package entityfields

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Stored is the set of properties an entity type stores, by stored name
// and by Go path: what the patterns check a declaration's property names
// against (an index's Properties, a relation's Fields).
type Stored struct {
	open   bool              // the type keeps any property
	names  map[string]bool   // stored names
	byPath map[string]string // Go path → stored name
	typ    string
}

// StoredOf returns the properties entity type t stores.
func StoredOf(t reflect.Type) (*Stored, error) {
	props, open, err := PropertiesOf(t)
	if err != nil {
		return nil, err
	}
	st := &Stored{open: open, names: map[string]bool{}, byPath: map[string]string{}, typ: t.String()}
	for _, p := range props {
		st.names[p.Name] = true
		st.byPath[p.GoPath] = p.Name
	}
	return st, nil
}

// Open returns the Stored of a type that keeps any property.
func Open() *Stored { return &Stored{open: true} }

// Models reports whether the type reads and writes the property name: it
// stores it, or keeps any property.
func (st *Stored) Models(name string) bool { return st.open || st.names[name] }

// Names returns the stored names, sorted (none for a type that keeps any
// property beyond them).
func (st *Stored) Names() []string {
	out := make([]string, 0, len(st.names))
	for n := range st.names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Resolve returns the stored name that name (a stored name or a field's
// Go path) stands for, or, when there is none, why: a sentence naming the
// stored properties name is the start of, if any.
func (st *Stored) Resolve(name string) (stored, reason string) {
	if st.Models(name) {
		return name, ""
	}
	if n, ok := st.byPath[name]; ok {
		return n, ""
	}
	var near []string
	for n := range st.names {
		if strings.HasPrefix(n, name+"_") {
			near = append(near, strconv.Quote(n))
		}
	}
	for path, n := range st.byPath {
		if strings.HasPrefix(path, name+".") && !slices.Contains(near, strconv.Quote(n)) {
			near = append(near, strconv.Quote(n))
		}
	}
	slices.Sort(near)
	reason = "names " + strconv.Quote(name) + ", which " + st.typ + " does not store"
	if len(near) > 0 {
		return "", reason + " (it stores " + strings.Join(near, ", ") + ": name those, or their Go paths)"
	}
	return "", reason + " (name a stored property, or the Go path of its field)"
}
