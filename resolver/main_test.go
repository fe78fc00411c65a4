package resolver_test

import (
	"testing"
	"time"

	"github.com/tablekit/tablekit/integration"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// The guide's departments and employees, and a third type.

type Department struct {
	PartitionKey  string
	RowKey        string
	ETag          string
	Timestamp     time.Time
	Name          string
	Manager       string `table:",omitempty"`
	EmployeeCount int32
}

// Employee is the current version, Employee.v2.
type Employee struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Timestamp    time.Time
	FirstName    string
	LastName     string
	Email        string `table:",omitempty"`
	Age          int32  `table:",omitempty"`
	Salary       float64
	EmployeeID   int64
}

// EmployeeV1 is the old version, Employee.v1: one Name field.
type EmployeeV1 struct {
	PartitionKey string
	RowKey       string
	Name         string
	Email        string `table:",omitempty"`
}

// Project is the third type of the mixed partitions.
type Project struct {
	PartitionKey string
	RowKey       string
	ETag         string
	Title        string
	Budget       int64
	Due          time.Time
}
