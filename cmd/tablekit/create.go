package main

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/entity"
)

// ensureTable creates tbl when it is missing and says so on stderr
// ("created table NAME"; with --json an event {"event": "created", …}).
// A credential that may not create tables (a table SAS) is not an error
// here: the writes then tell whether the table exists.
func (c *cli) ensureTable(ctx context.Context, tbl *entity.Table[entity.DynamicEntity], name string) error {
	err := tbl.CreateTable(ctx)
	var oe *entity.OutcomeError
	switch {
	case err == nil:
		if c.json {
			c.event(map[string]any{"event": "created", "command": c.name, "table": name})
		} else {
			c.say("created table %s", name)
		}
		return nil
	case errors.Is(err, entity.ErrAlreadyExists), errors.Is(err, entity.ErrUnauthorized):
		return nil
	case errors.As(err, &oe) && errors.Is(oe.Last, entity.ErrAlreadyExists):
		// A resent create found the table: made by its first try or by
		// another process, which nothing tells apart.
		c.say("table %s exists (created now, or by another process at the same time)", name)
		return nil
	}
	return err
}
