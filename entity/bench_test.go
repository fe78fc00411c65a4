package entity_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
)

// RefEntity is the benchmark's reference entity: ten properties of mixed
// types, about 500 bytes of JSON.
type RefEntity struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Timestamp    time.Time
	FirstName    string
	LastName     string
	Email        string
	Age          int32
	EmployeeID   int64
	Salary       float64
	Active       bool
	Hired        time.Time
	Badge        uuid.UUID
	Avatar       []byte
}

func refEntity() RefEntity {
	return RefEntity{
		PartitionKey: "Sales", RowKey: "empid_000123",
		FirstName: "Jonathan", LastName: "Jones", Email: "jonesj@contoso.com",
		Age: 38, EmployeeID: 9000000123, Salary: 72500.5, Active: true,
		Hired:  time.Date(2012, 3, 4, 5, 6, 7, 123456700, time.UTC),
		Badge:  uuid.MustParse("0b4a1f0e-7c38-4f5e-9d1a-33a5c7b8e901"),
		Avatar: []byte("0123456789abcdef0123456789abcdef"),
	}
}

// plainRef is the floor: encoding/json of a struct with no annotations.
type plainRef struct {
	PartitionKey, RowKey       string
	FirstName, LastName, Email string
	Age                        int32
	EmployeeID                 int64
	Salary                     float64
	Active                     bool
	Hired                      time.Time
	Badge                      uuid.UUID
	Avatar                     []byte
}

// codec is one way to turn the reference entity into JSON and back.
type codec struct {
	name      string
	marshal   func() ([]byte, error)
	unmarshal func([]byte) error
}

func BenchmarkCodec(b *testing.B) {
	ref := refEntity()
	body, err := entity.Marshal(&ref)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("reference entity body: %d bytes", len(body))

	// The documented aztables way: fill an EDMEntity from the struct, JSON it;
	// read back into an EDMEntity and copy the typed values out.
	toEDM := func(r *RefEntity) aztables.EDMEntity {
		return aztables.EDMEntity{
			Entity: aztables.Entity{PartitionKey: r.PartitionKey, RowKey: r.RowKey},
			Properties: map[string]any{
				"FirstName": r.FirstName, "LastName": r.LastName, "Email": r.Email,
				"Age": r.Age, "EmployeeID": aztables.EDMInt64(r.EmployeeID), "Salary": r.Salary,
				"Active": r.Active, "Hired": aztables.EDMDateTime(r.Hired),
				"Badge": aztables.EDMGUID(r.Badge.String()), "Avatar": aztables.EDMBinary(r.Avatar),
			},
		}
	}
	fromEDM := func(e *aztables.EDMEntity) (RefEntity, bool) {
		p := e.Properties
		r := RefEntity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, ETag: e.ETag, Timestamp: time.Time(e.Timestamp)}
		var ok1, ok2, ok3, ok4, ok5, ok6, ok7, ok8, ok9, ok10 bool
		r.FirstName, ok1 = p["FirstName"].(string)
		r.LastName, ok2 = p["LastName"].(string)
		r.Email, ok3 = p["Email"].(string)
		r.Age, ok4 = p["Age"].(int32)
		var id aztables.EDMInt64
		id, ok5 = p["EmployeeID"].(aztables.EDMInt64)
		r.EmployeeID = int64(id)
		// EDMEntity.UnmarshalJSON (v1.4.1) drops every value annotated
		// Edm.Double (it becomes nil), so Salary is not checked here.
		r.Salary, _ = p["Salary"].(float64)
		ok6 = true
		r.Active, ok7 = p["Active"].(bool)
		var hired aztables.EDMDateTime
		hired, ok8 = p["Hired"].(aztables.EDMDateTime)
		r.Hired = time.Time(hired)
		var g aztables.EDMGUID
		g, ok9 = p["Badge"].(aztables.EDMGUID)
		r.Badge, _ = uuid.Parse(string(g))
		var av aztables.EDMBinary
		av, ok10 = p["Avatar"].(aztables.EDMBinary)
		r.Avatar = av
		return r, ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && ok8 && ok9 && ok10
	}
	plain := plainRef{ref.PartitionKey, ref.RowKey, ref.FirstName, ref.LastName, ref.Email, ref.Age, ref.EmployeeID, ref.Salary, ref.Active, ref.Hired, ref.Badge, ref.Avatar}
	codecs := []codec{
		{"tablekit", func() ([]byte, error) { return entity.Marshal(&ref) }, func(data []byte) error {
			var out RefEntity
			return entity.Unmarshal(data, &out)
		}},
		{"aztables-EDMEntity", func() ([]byte, error) { return json.Marshal(toEDM(&ref)) }, func(data []byte) error {
			var e aztables.EDMEntity
			if err := json.Unmarshal(data, &e); err != nil {
				return err
			}
			if _, ok := fromEDM(&e); !ok {
				return errors.New("EDMEntity lost a type")
			}
			return nil
		}},
		{"encoding-json-plain", func() ([]byte, error) { return json.Marshal(&plain) }, func(data []byte) error {
			var out plainRef
			return json.Unmarshal(data, &out)
		}},
	}
	for _, c := range codecs {
		data, err := c.marshal()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/Marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.marshal(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/Unmarshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.unmarshal(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/RoundTrip", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				data, err := c.marshal()
				if err == nil {
					err = c.unmarshal(data)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReferenceEntityRoundTrips checks the benchmark's reference entity.
func TestReferenceEntityRoundTrips(t *testing.T) {
	ref := refEntity()
	body, err := entity.Marshal(&ref)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(body); n < 400 || n > 650 {
		t.Errorf("reference body is %d bytes, want about 500", n)
	}
	var out RefEntity
	if err := entity.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if out.Email != ref.Email || out.EmployeeID != ref.EmployeeID || !out.Hired.Equal(ref.Hired) || out.Badge != ref.Badge {
		t.Errorf("got %+v", out)
	}
}
