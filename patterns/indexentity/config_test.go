package indexentity_test

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/patterns/internal/patterntest"
)

// TestProcessorRequired: an OtherPartition, TableWide or Blob index needs
// Config.Processor; without it New returns a *ConfigError naming
// Config.Processor, before any request; SamePartition indexes alone need
// none.
func TestProcessorRequired(t *testing.T) {
	t.Parallel()
	emps := patterntest.Table[Employee](t, env)
	for _, pl := range []indexentity.Placement{indexentity.OtherPartition, indexentity.TableWide, indexentity.Blob} {
		cfg := indexentity.Config{}
		if pl == indexentity.Blob {
			cfg.Blobs = env.Container(t)
		}
		_, err := indexentity.New(emps, cfg, indexentity.Index[Employee]{Name: "lastname", Value: lastName, Placement: pl})
		var ce *indexentity.ConfigError
		if !errors.As(err, &ce) || ce.Field != "Config.Processor" || !errors.Is(err, indexentity.ErrInvalidConfig) || !errors.Is(err, entity.ErrInvalid) ||
			err.Error() != "indexentity: invalid Config.Processor: is nil, and OtherPartition, TableWide and Blob indexes need one" {
			t.Errorf("%v without a processor: %v", pl, err)
		}
	}
	if _, err := indexentity.New(emps, indexentity.Config{}, indexentity.Index[Employee]{Name: "lastname", Value: lastName}); err != nil {
		t.Errorf("SamePartition without a processor: %v", err)
	}
}
