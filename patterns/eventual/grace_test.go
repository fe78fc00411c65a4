package eventual

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/entity"
)

// TestGraceMustBeShorterThanTheRedeliveryWindow checks the window a
// processor keeps redelivering a failing message for, the grace period
// derived from it, and that a grace a waiting message could not outlast
// — or one of a processor that redelivers at once — is refused with a
// *ConfigError naming the field and matching entity.ErrInvalid.
func TestGraceMustBeShorterThanTheRedeliveryWindow(t *testing.T) {
	for _, c := range []struct {
		name        string
		cfg         Config
		window, def time.Duration
		ok, tooLong time.Duration // a grace that fits, one that does not
	}{
		{"defaults", Config{}, 15 * time.Second, 10 * time.Second, 10 * time.Second, 15 * time.Second},
		{"RetryDelay 2s", Config{RetryDelay: 2 * time.Second}, 30 * time.Second, 20 * time.Second, 29 * time.Second, 30 * time.Second},
		{"MaxDeliveries 7", Config{MaxDeliveries: 7}, 63 * time.Second, 42 * time.Second, 42 * time.Second, time.Minute + 3*time.Second},
		// 200 ms, 400 ms, 800 ms, then 1 s: whole seconds at the service.
		{"sub-second delays", Config{RetryDelay: 200 * time.Millisecond, MaxRetryDelay: time.Second, MaxDeliveries: 20}, 19 * time.Second, 12*time.Second + 666666666, 8 * time.Second, 19 * time.Second},
		// 1 + 2 + 4 + 4 + 4: MaxRetryDelay caps the doubling.
		{"capped", Config{MaxRetryDelay: 4 * time.Second, MaxDeliveries: 6}, 15 * time.Second, 10 * time.Second, 14 * time.Second, 15 * time.Second},
		{"NoRetryDelay", Config{RetryDelay: NoRetryDelay}, 0, 0, 0, time.Second},
		{"one delivery", Config{MaxDeliveries: 1}, 0, 0, 0, time.Second},
	} {
		p, err := New([]Queue{testQueue(t)}, nil, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.RedeliveryWindow(); got != c.window {
			t.Errorf("%s: RedeliveryWindow = %v, want %v", c.name, got, c.window)
		}
		if got := p.DefaultGrace(); got != c.def {
			t.Errorf("%s: DefaultGrace = %v, want %v", c.name, got, c.def)
		}
		if c.def > 0 {
			if err := p.CheckGrace("Config.Grace", p.DefaultGrace()); err != nil {
				t.Errorf("%s: CheckGrace(DefaultGrace) = %v", c.name, err)
			}
			if err := p.CheckGrace("Config.Grace", c.ok); err != nil {
				t.Errorf("%s: CheckGrace(%v) = %v", c.name, c.ok, err)
			}
		}
		for _, g := range []time.Duration{c.tooLong, -time.Second} {
			err := p.CheckGrace("Config.Grace", g)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != "Config.Grace" || !errors.Is(err, entity.ErrInvalid) || !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("%s: CheckGrace(%v) = %v, want a *ConfigError naming Config.Grace", c.name, g, err)
			}
		}
		if g := c.tooLong; g > 0 {
			if err := p.CheckGrace("Config.Grace", g); err == nil || !strings.Contains(err.Error(), "redelivery window") {
				t.Errorf("%s: CheckGrace(%v) = %v, want it to name the redelivery window", c.name, g, err)
			}
		}
	}
	var nilp *Processor
	if err := nilp.CheckGrace("", time.Second); !errors.Is(err, entity.ErrInvalid) {
		t.Errorf("CheckGrace of a nil processor = %v, want a *ConfigError", err)
	}
	if nilp.RedeliveryWindow() != 0 || nilp.DefaultGrace() != 0 {
		t.Error("a nil processor has a redelivery window")
	}
}
