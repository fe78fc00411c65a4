// Package entity maps Go structs to Azure Table Storage entities and back.
//
// It implements the service model of the Azure Table design guide (§1: entity
// shape, the eight EDM property types and every size and naming limit), the
// data-modification rules (§3: optimistic concurrency, merge versus replace,
// entity group transactions) and the query implementation notes (§2, §7).
//
// Marshal and Unmarshal convert between a tagged struct and the JSON body the
// service speaks, with the @odata.type annotations the service needs:
//
//	type Employee struct {
//		Department string    `table:"PartitionKey,pk"`
//		ID         string    `table:"RowKey,rk"`
//		Email      string    `table:"Email"`
//		Salary     int64     `table:"Salary"`
//		Hired      time.Time `table:"Hired"`
//		ETag       string    `table:",etag"`
//	}
//
//	body, err := entity.Marshal(&Employee{...})
//
// Both directions validate every documented limit before a request could be
// sent: errors.Is(err, entity.ErrInvalid) reports a violation, and
// errors.As(err, &*entity.ValidationError) names the property, the rule, the
// limit and the offending value.
package entity
