package entity

import "reflect"

// ToDynamic returns v, a pointer to a tagged struct (or a *DynamicEntity),
// as a property bag: its keys, ETag and Timestamp, and every property as the
// canonical Go value Unmarshal would read back once it is stored (an int
// field as int64, a float32 as float64, a time in UTC to 100 ns, a custom
// type through its hook).
//
// Every property is checked as Marshal checks it, but the limits of one
// stored entity — 252 properties, 1 MiB — are not: the bag may describe a
// logical entity larger than one entity of the service, stored as several
// (design guide §6.10, package patterns/wide). Marshal the bag, or
// Validate it, to apply them.
func ToDynamic(v any) (*DynamicEntity, error) {
	rv, sh, err := entityValue(v)
	if err != nil {
		return nil, err
	}
	d := &DynamicEntity{}
	err = logicalBody(v, func(body []byte) error { return d.decode(body) })
	if err != nil {
		return nil, err
	}
	s := sh.system(rv)
	d.ETag, d.Timestamp = s.ETag, s.Timestamp
	return d, nil
}

// FromDynamic stores the bag d into v, a pointer to a tagged struct (or a
// *DynamicEntity), as Unmarshal would store d's body: the keys, the ETag
// and Timestamp when v has fields for them, and every property, converted
// to its field's type with the same range checks (a *DecodeError when a
// value does not fit). Properties v does not model go to its `extra` field,
// or are ignored; fields d has no property for are left as they are.
//
// As for ToDynamic, the limits of one stored entity are not applied.
func FromDynamic(d *DynamicEntity, v any) error {
	if d == nil {
		return &TypeError{Type: reflect.TypeOf(d), Reason: "nil pointer"}
	}
	rv, sh, err := entityValue(v)
	if err != nil {
		return err
	}
	err = logicalBody(d, func(body []byte) error { return sh.decode(body, rv) })
	if err != nil {
		return err
	}
	sh.setSystem(rv, System{PartitionKey: d.PartitionKey, RowKey: d.RowKey, ETag: d.ETag, Timestamp: d.Timestamp})
	return nil
}

// logicalBody encodes v without the limits of one stored entity and hands
// the body, valid only during the call, to fn: the two conversions go
// through the wire form so that they keep exactly the codec's mapping.
func logicalBody(v any, fn func(body []byte) error) error {
	bp := bufPool.Get().(*[]byte)
	body, err := encoder{b: (*bp)[:0], logical: true}.entity(v)
	if err == nil {
		err = fn(body)
	}
	if cap(body) <= 1<<20 {
		*bp = body[:0]
		bufPool.Put(bp)
	}
	return err
}
