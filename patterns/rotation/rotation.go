package rotation

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/tablename"
)

// Common periods. Any whole number of minutes works.
const (
	Hour = time.Hour
	Day  = 24 * time.Hour
)

// suffixLen is the length of the random part of a table name: 8 characters
// of [a-z0-9], about 41 bits.
const suffixLen = 8

// MaxNameLength is the longest Config.Name: a table name has at most 63
// characters, and the period (up to 12 digits) and the suffix follow the
// name.
const MaxNameLength = tablename.MaxLength - 12 - suffixLen

// Config configures a Rotation.
type Config[T any] struct {
	// Name starts the name of every period table and is the rotation's
	// partition in the catalog: 1 to MaxNameLength ASCII letters and digits,
	// starting with a letter. Required.
	Name string
	// Period is the span of one table: Day, Hour or any whole number of
	// minutes, aligned in UTC (days start at midnight UTC; periods are
	// counted from 0001-01-01, so a 7-day period starts on Mondays). 0 means
	// Day. A rotation keeps its period: the catalog refuses another.
	Period time.Duration
	// Time returns the instant an entity belongs to: it picks the table a
	// write goes to, and Query returns only entities whose Time is in the
	// range asked for. Required. An instant before 1601-01-01 or from
	// 9999-12-01 on is refused with a *ConfigError before any request:
	// the catalog stores each period's start and end as DateTime, which
	// the service takes from 1601 to the end of 9999, and a period that
	// starts in 9999's last month could end past it.
	Time func(*T) time.Time
	// Ahead is how many periods after the one being written are created
	// with it, so the next table exists (and has had time to warm up) before
	// writes move to it. 0 means 1; negative means none.
	Ahead int
	// Concurrency is the most table requests one Query has in flight; 0
	// means entity.DefaultConcurrency.
	Concurrency int
	// Retry bounds the catalog's optimistic-concurrency loops; the zero value
	// means entity.RetryPolicy's defaults.
	Retry entity.RetryPolicy
	// Open, when set, wraps each period table the rotation makes before
	// any use: return crypt.New(t, cfg).Entity() (package entity/crypt)
	// to encrypt the rotation's entities, each bound to its period
	// table's name. It must return a table of the same name; nil Open
	// uses each table as it is.
	Open func(t *entity.Table[T]) (*entity.Table[T], error)
}

func (c Config[T]) withDefaults() Config[T] {
	if c.Period == 0 {
		c.Period = Day
	}
	if c.Ahead == 0 {
		c.Ahead = 1
	} else if c.Ahead < 0 {
		c.Ahead = 0
	}
	if c.Concurrency <= 0 {
		c.Concurrency = entity.DefaultConcurrency
	}
	return c
}

func (c Config[T]) validate() error {
	if r := tablename.CheckPrefix(c.Name, tablename.MaxLength-MaxNameLength); r != "" {
		return &ConfigError{Field: "Name", Reason: r}
	}
	if c.Period < time.Minute || c.Period%time.Minute != 0 {
		return &ConfigError{Field: "Period", Reason: "must be a whole number of minutes, not " + c.Period.String()}
	}
	if c.Time == nil {
		return &ConfigError{Field: "Time", Reason: "no function to read an entity's time"}
	}
	if c.Ahead > 99 {
		return &ConfigError{Field: "Ahead", Reason: "at most 99 periods ahead, not " + strconv.Itoa(c.Ahead)}
	}
	return nil
}

// Rotation writes entities of type T to one table per period and deletes
// whole periods at once. It is safe for concurrent use, and several
// Rotations (in several processes) with the same Name and catalog cooperate.
type Rotation[T any] struct {
	svc     *aztables.ServiceClient
	catalog *entity.Table[catalogRow]
	cfg     Config[T]
	format  string // the period's label layout

	mu sync.Mutex
	// tables caches the live periods' tables by period start (Unix
	// seconds): a period's table never changes while it lives.
	tables map[int64]*entity.Table[T]
	// opened marks the periods loaded for a write or Prepare, whose
	// periods ahead were claimed and created with them: a period only
	// created ahead is loaded again on its first write.
	opened map[int64]bool
	// expiredBefore is the highest expiry mark seen: periods that start
	// before it are gone.
	expiredBefore time.Time
	// claimMu makes one goroutine claim periods at a time, so a burst of
	// writers reaching a new period does not race itself in the catalog.
	claimMu sync.Mutex
}

// New returns a Rotation that creates and deletes its period tables through
// svc and lists them in the catalog table, which must exist (several
// rotations may share one catalog; each keeps one partition, its Name).
// Nothing is sent: the configuration and T are checked first. Build svc
// and catalog with entity.ClientOptions (or with package account), so that
// a create, delete or write whose reply was lost is settled, not misreported
// as refused.
func New[T any](svc *aztables.ServiceClient, catalog *aztables.Client, cfg Config[T]) (*Rotation[T], error) {
	if svc == nil {
		return nil, &ConfigError{Field: "svc", Reason: "nil *aztables.ServiceClient"}
	}
	if catalog == nil {
		return nil, &ConfigError{Field: "catalog", Reason: "nil *aztables.Client"}
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// T is checked now rather than at the first write.
	if _, err := entity.NewTable[T](svc.NewClient("placeholder")); err != nil {
		return nil, err
	}
	cat, err := entity.NewTable[catalogRow](catalog)
	if err != nil {
		return nil, err
	}
	return &Rotation[T]{svc: svc, catalog: cat, cfg: cfg, format: labelFormat(cfg.Period), tables: map[int64]*entity.Table[T]{}, opened: map[int64]bool{}}, nil
}

// PeriodOf returns the start of the period that holds t (t itself, in
// UTC, for a nil or zero Rotation).
func (r *Rotation[T]) PeriodOf(t time.Time) time.Time {
	if r == nil || r.cfg.Period <= 0 {
		return t.UTC()
	}
	return t.UTC().Truncate(r.cfg.Period)
}

// ok refuses a nil or zero Rotation, which New never returns.
func (r *Rotation[T]) ok() error {
	if r == nil || r.catalog == nil || r.svc == nil {
		return &ConfigError{Field: "Rotation", Reason: "is nil or the zero value: make it with New"}
	}
	return nil
}

// labelFormat is the layout of a period's start in table names and catalog
// keys: as short as the period allows, fixed width for a given period so
// that labels sort as the periods do.
func labelFormat(p time.Duration) string {
	switch {
	case p%Day == 0:
		return "20060102"
	case p%Hour == 0:
		return "2006010215"
	}
	return "200601021504"
}

func (r *Rotation[T]) label(start time.Time) string { return start.UTC().Format(r.format) }

// newTableName returns a fresh name for a period's table: the rotation's
// name, the period's label and a random suffix. A deleted table's name
// cannot be used again for a while (at least 40 seconds on Azure Storage),
// so a period is never given a name that was used before.
func (r *Rotation[T]) newTableName(start time.Time) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b [suffixLen]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return r.cfg.Name + r.label(start) + string(b[:])
}

// Valid instants: a catalog entry keeps its period's start and end as
// DateTime, which the service allows from 1601 to 9999.
var (
	minTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 1, 0, 0, 0, 0, time.UTC)
)

func (r *Rotation[T]) checkTime(field string, t time.Time) error {
	if t.Before(minTime) || !t.Before(maxTime) {
		return &ConfigError{Field: field, Reason: "time " + t.UTC().Format(time.RFC3339Nano) + " outside 1601-01-01 to 9999-12-01"}
	}
	return nil
}

// timeOf returns the time of e, checked.
func (r *Rotation[T]) timeOf(e *T) (time.Time, error) {
	if e == nil {
		return time.Time{}, &ConfigError{Field: "entity", Reason: "is nil"}
	}
	t := r.cfg.Time(e)
	return t, r.checkTime("entity time", t)
}

// table returns a typed client of the named table (T was checked by New),
// through Config.Open.
func (r *Rotation[T]) table(name string) (*entity.Table[T], error) {
	t, err := entity.NewTableFromService[T](r.svc, name)
	if err != nil || r.cfg.Open == nil {
		return t, err
	}
	opened, err := r.cfg.Open(t)
	switch {
	case err != nil:
		return nil, fmt.Errorf("rotation: Config.Open of table %s: %w", name, err)
	case opened == nil || opened.Name() != name:
		return nil, &ConfigError{Field: "Open", Reason: "returned no table, or not table " + name}
	}
	return opened, nil
}

// tableGone reports an error that says the table is not there: deleted,
// being deleted, or never created.
func tableGone(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, entity.ErrTableNotFound) {
		return true
	}
	// A resent DeleteTable that found the table gone: its own lost first
	// try or another process deleted it; gone either way.
	var oe *entity.OutcomeError
	if errors.As(err, &oe) && oe.Op == "DeleteTable" && oe.Last != nil && tableGone(oe.Last) {
		return true
	}
	switch serviceCode(err) {
	case "TableNotFound", "TableBeingDeleted":
		return true
	}
	return false
}

// resentCreateFoundTable reports a CreateTable whose first try's reply was
// lost and whose resend found the table (409 TableAlreadyExists): entity
// answers ErrOutcomeUnknown, since the table found may be the one the first
// try created.
func resentCreateFoundTable(err error) bool {
	var oe *entity.OutcomeError
	return errors.As(err, &oe) && errors.Is(oe.Last, entity.ErrAlreadyExists) && serviceCode(oe.Last) != "TableBeingDeleted"
}

// serviceCode returns the service's error code behind err, or "".
func serviceCode(err error) string {
	var se *entity.ServiceError
	if errors.As(err, &se) {
		return se.Code
	}
	var te *entity.TransactionError
	if errors.As(err, &te) {
		return te.Code
	}
	return ""
}

// detached returns a context for clean-up steps that must run even when
// ctx has ended, bounded in time.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}
