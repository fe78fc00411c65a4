package dataseries

import (
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/keys"
)

// DefaultSlotsPerEntity is how many counters one entity holds when
// Config.SlotsPerEntity is 0: the service allows 252 properties, and the
// rest is left for the application's own properties and tablekit's write
// token (the TkWrite property).
const DefaultSlotsPerEntity = 240

// MaxSlotsPerEntity is the most counters one entity can hold: 252
// properties less the write token.
const MaxSlotsPerEntity = entity.MaxUserProperties - 1

// Config describes the series of a Series. All series of one Series have
// the same length and layout; a table may hold series of several layouts
// under different keys.
type Config struct {
	// Slots is the length of a series; 0 means 24 (a day of hourly
	// counters, the guide's example).
	Slots int
	// SlotsPerEntity is the most counters one entity holds, 1 to
	// MaxSlotsPerEntity; 0 means DefaultSlotsPerEntity. A longer series rolls
	// over to further entities of the same partition.
	SlotsPerEntity int
	// Prefix starts the property name of every slot: slot i is Prefix
	// followed by i, zero-padded to the width of Slots-1 ("H00" … "H23" for
	// Prefix "H" and 24 slots). "" means "C". It must make valid property
	// names (a C# identifier).
	Prefix string
	// Retry bounds the optimistic-concurrency loop of one increment; the
	// zero value is entity.Table.Modify's defaults (40 rounds; see
	// entity.RetryPolicy for sizing them).
	Retry entity.RetryPolicy
}

func (c Config) withDefaults() (Config, error) {
	if c.Slots == 0 {
		c.Slots = 24
	}
	if c.SlotsPerEntity == 0 {
		c.SlotsPerEntity = DefaultSlotsPerEntity
	}
	if c.Prefix == "" {
		c.Prefix = "C"
	}
	if c.Slots < 0 {
		return c, &ConfigError{Field: "Config.Slots", Reason: "is " + strconv.Itoa(c.Slots) + ", want 1 or more (0 means 24)"}
	}
	if c.SlotsPerEntity < 1 || c.SlotsPerEntity > MaxSlotsPerEntity {
		return c, &ConfigError{Field: "Config.SlotsPerEntity", Reason: "is " + strconv.Itoa(c.SlotsPerEntity) + ", want 1 to 251 (0 means 240)"}
	}
	// Compared without computing Slots+SlotsPerEntity, which overflows
	// for a Slots near math.MaxInt.
	if c.Slots/c.SlotsPerEntity >= entity.MaxPageSize && c.Slots > entity.MaxPageSize*c.SlotsPerEntity {
		return c, &ConfigError{Field: "Config.Slots", Reason: "is " + strconv.Itoa(c.Slots) + ", want at most 1,000 entities per series, so that one query reads it"}
	}
	// The longest name is the one to check; the service's rules do not
	// depend on the digits.
	probe := &entity.DynamicEntity{Properties: map[string]any{c.Prefix + keys.Pad(0, digits(c.Slots-1)): int64(0)}}
	if err := entity.Validate(probe); err != nil {
		return c, &ConfigError{Field: "Config.Prefix", Reason: strconv.Quote(c.Prefix) + " does not make valid property names: " + strings.TrimPrefix(err.Error(), "entity: ")}
	}
	return c, nil
}

// Series reads and increments the counter series of one table (design
// guide §6.9). It is safe for concurrent use.
type Series struct {
	tbl   *entity.Table[entity.DynamicEntity]
	mode  entity.UpdateMode // Merge; Replace for an encrypted table, which refuses merges
	cfg   Config
	width int // digits of a slot number
	chunk int // digits of a chunk number; 0 when a series is one entity
}

// New returns the series of tbl laid out as cfg says.
func New(tbl *entity.Table[entity.DynamicEntity], cfg Config) (*Series, error) {
	if tbl == nil {
		return nil, &ConfigError{Field: "table", Reason: ReasonNil}
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// Write tokens make every increment exactly-once when a reply is lost:
	// Modify then tells its own applied write from another writer's.
	s := &Series{tbl: tbl.WithWriteTokens(), mode: entity.Merge, cfg: cfg, width: digits(cfg.Slots - 1)}
	if tbl.Protected() {
		s.mode = entity.Replace
	}
	if n := s.chunks(); n > 1 {
		s.chunk = digits(n - 1)
	}
	return s, nil
}

// Slots is the length of every series.
func (s *Series) Slots() int {
	if s.ok() != nil {
		return 0
	}
	return s.cfg.Slots
}

// chunks is the number of entities a series takes.
func (s *Series) chunks() int { return (s.cfg.Slots + s.cfg.SlotsPerEntity - 1) / s.cfg.SlotsPerEntity }

// Property returns the name of the property that holds slot i.
func (s *Series) Property(slot int) string {
	if s.ok() != nil {
		return ""
	}
	return s.cfg.Prefix + keys.Pad(int64(slot), s.width)
}

// entityKey returns the RowKey of the entity that holds slot of the series
// rowKey: rowKey itself when a series is one entity, and otherwise the
// compound key (rowKey, chunk number), which no other series' key can equal.
func (s *Series) entityKey(rowKey string, slot int) string {
	if s.chunk == 0 {
		return rowKey
	}
	return keys.Compound(rowKey, keys.Pad(int64(slot/s.cfg.SlotsPerEntity), s.chunk))
}

// checkKeys refuses keys that cannot name the series' entities.
func (s *Series) checkKeys(op, pk, rk string) error {
	if err := keys.Validate(pk); err != nil {
		return &ArgError{Op: op, Arg: "partition key", Value: strconv.Quote(pk), Reason: "not a valid key", Err: err}
	}
	if err := keys.Validate(s.entityKey(rk, s.cfg.Slots-1)); err != nil {
		return &ArgError{Op: op, Arg: "row key", Value: strconv.Quote(rk), Reason: "not a valid key (with the chunk number, when a series takes several entities)", Err: err}
	}
	return nil
}

// digits is the number of decimal digits of n >= 0.
func digits(n int) int { return len(strconv.Itoa(n)) }
