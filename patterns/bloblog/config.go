package bloblog

import (
	"strconv"
	"time"
)

// Limits of an append blob on Azure Storage.
const (
	// MaxBlockBytes is the largest append block.
	MaxBlockBytes = 4 << 20
	// MaxBlocks is the most blocks an append blob can have.
	MaxBlocks = 50_000
	// MaxBlobBytes is the largest append blob: 50,000 blocks of 4 MiB,
	// about 195 GiB.
	MaxBlobBytes = int64(MaxBlocks) * MaxBlockBytes
)

// Config configures a Logger and a Reader. A Reader uses only Service and
// Period, which must be the Logger's.
type Config struct {
	// Service names the log: blobs are named
	// <Service>/YYYY/MM/DD/HHMM/NNNNNN.log. ASCII letters, digits, '-', '_'
	// and '.', with '/' between segments. Required.
	Service string
	// Period is the span of the records of one folder of blobs, aligned in
	// UTC: a whole number of minutes; 0 means an hour, the guide's choice.
	Period time.Duration
	// FlushBytes starts a flush when this many bytes are buffered; 0 means
	// MaxBlockBytes, one full block.
	FlushBytes int
	// FlushInterval is the longest a record waits in the buffer; 0 means 5
	// seconds. It bounds what a crash can lose.
	FlushInterval time.Duration
	// MaxBufferBytes is the most bytes buffered: Append waits for the
	// flush in progress beyond it (and fails if flushes are failing). 0
	// means 4 × FlushBytes.
	MaxBufferBytes int
	// MaxBlockBytes, MaxBlocks and MaxBlobBytes are the append-blob limits
	// the Logger stays within, rolling to the next blob before it would
	// cross one. 0 means the service's limits (MaxBlockBytes, MaxBlocks,
	// MaxBlobBytes); smaller values make smaller blobs.
	MaxBlockBytes int
	MaxBlocks     int
	MaxBlobBytes  int64
	// CloseTimeout bounds the last flush, when Close is called or the
	// Logger's context ends; 0 means 30 seconds.
	CloseTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Period == 0 {
		c.Period = time.Hour
	}
	if c.MaxBlockBytes == 0 {
		c.MaxBlockBytes = MaxBlockBytes
	}
	if c.MaxBlocks == 0 {
		c.MaxBlocks = MaxBlocks
	}
	if c.MaxBlobBytes == 0 {
		c.MaxBlobBytes = MaxBlobBytes
	}
	if c.FlushBytes == 0 {
		c.FlushBytes = c.MaxBlockBytes
	}
	if c.FlushInterval == 0 {
		c.FlushInterval = 5 * time.Second
	}
	if c.MaxBufferBytes == 0 {
		c.MaxBufferBytes = 4 * c.FlushBytes
	}
	if c.CloseTimeout == 0 {
		c.CloseTimeout = 30 * time.Second
	}
	return c
}

// minBlockBytes leaves room for a record of a few bytes.
const minBlockBytes = 64

func (c Config) validate() error {
	if r := checkService(c.Service); r != "" {
		return &ConfigError{Field: "Config.Service", Reason: r}
	}
	if c.Period < time.Minute || c.Period%time.Minute != 0 {
		return &ConfigError{Field: "Config.Period", Reason: "must be a whole number of minutes, not " + c.Period.String()}
	}
	if c.MaxBlockBytes < minBlockBytes || c.MaxBlockBytes > MaxBlockBytes {
		return &ConfigError{Field: "Config.MaxBlockBytes", Reason: "must be 64 to 4 MiB, not " + strconv.Itoa(c.MaxBlockBytes)}
	}
	if c.MaxBlocks < 1 || c.MaxBlocks > MaxBlocks {
		return &ConfigError{Field: "Config.MaxBlocks", Reason: "must be 1 to 50,000, not " + strconv.Itoa(c.MaxBlocks)}
	}
	if c.MaxBlobBytes < int64(c.MaxBlockBytes) || c.MaxBlobBytes > MaxBlobBytes {
		return &ConfigError{Field: "Config.MaxBlobBytes", Reason: "must be MaxBlockBytes to 50,000 × 4 MiB, not " + strconv.FormatInt(c.MaxBlobBytes, 10)}
	}
	if c.FlushBytes < 1 {
		return &ConfigError{Field: "Config.FlushBytes", Reason: "must be positive, not " + strconv.Itoa(c.FlushBytes)}
	}
	if c.FlushInterval < 0 {
		return &ConfigError{Field: "Config.FlushInterval", Reason: ReasonNegative}
	}
	if c.MaxBufferBytes < c.FlushBytes || c.MaxBufferBytes < c.MaxBlockBytes {
		return &ConfigError{Field: "Config.MaxBufferBytes", Reason: "must be at least FlushBytes and MaxBlockBytes, not " + strconv.Itoa(c.MaxBufferBytes)}
	}
	if c.CloseTimeout < 0 {
		return &ConfigError{Field: "Config.CloseTimeout", Reason: ReasonNegative}
	}
	return nil
}

// periodOf returns the start of the period that holds t.
func (c Config) periodOf(t time.Time) time.Time { return t.UTC().Truncate(c.Period) }
