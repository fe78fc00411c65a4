package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/keys"
)

const tablesUsage = `list [--prefix P] | create NAME | delete NAME --yes

Lists the account's tables (those whose name starts with --prefix), creates
one (an existing table is not an error: it says so), or deletes one with its
entities (--yes required). The table of create and delete is given as the
argument or, as in the other commands, with --table NAME.`

const tablesExample = `  tablekit tables list --prefix Orders
  tablekit tables create Orders2024
  tablekit tables create --table Orders2024
  tablekit tables delete Orders2023 --yes`

func runTables(c *cli, args []string) int {
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	c.name = strings.TrimSpace("tables " + sub)
	fs := c.flags(tablesUsage, tablesExample)
	var cf connFlags
	cf.register(fs, "", "")
	prefix := fs.String("prefix", "", "list: only tables whose name starts with this")
	yes := fs.Bool("yes", false, "delete: yes, delete the table and every entity in it")
	table := fs.String("table", "", "create, delete: the table (or give it as the argument)")
	// The table name may come before or after the flags.
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if code, done := c.parse(fs, args, 1); done {
		return code
	}
	if name == "" {
		name = fs.Arg(0)
	}
	switch {
	case *table == "":
	case name == "":
		name = *table
	case name != *table:
		return c.fail(usagef("two table names, %q and --table %q: give one", name, *table))
	}
	switch sub {
	case "list":
		if name != "" {
			return c.fail(usagef("list takes no table name (use --prefix)"))
		}
	case "create", "delete":
		if name == "" {
			return c.fail(usagef("%s needs a table name", sub))
		}
	case "":
		return c.fail(usagef("say list, create or delete"))
	default:
		return c.fail(usagef("unknown tables command %q: want list, create or delete", sub))
	}
	if sub == "delete" && !*yes {
		return c.fail(usagef("deleting table %s deletes every entity in it: add --yes", name))
	}
	cn, err := c.connect(&cf, true)
	if err != nil {
		return c.fail(err)
	}
	if cn.acct == nil {
		return c.fail(usagef("a table SAS URL reaches one table: give a connection string, --account-url or an account SAS URL"))
	}
	ctx, cancel := c.workContext()
	defer cancel()
	switch sub {
	case "list":
		svc, err := cn.acct.TableService()
		if err != nil {
			return c.fail(err)
		}
		opts := &aztables.ListTablesOptions{}
		if *prefix != "" {
			from, to := keys.PrefixRange(*prefix)
			f := filter.Ge("TableName", from)
			if to != "" {
				f = f.And(filter.Lt("TableName", to))
			}
			s, err := f.Build()
			if err != nil {
				return c.fail(err)
			}
			opts.Filter = &s
		}
		var names []string
		pager := svc.NewListTablesPager(opts)
		for pager.More() {
			page, err := pager.NextPage(c.ctx)
			if err != nil {
				if c.stopped() {
					return c.interrupted(fmt.Sprintf("%d tables listed", len(names)), "", "")
				}
				return c.fail(fmt.Errorf("list tables: %w", wrapService(err)))
			}
			for _, t := range page.Tables {
				if t != nil && t.Name != nil {
					names = append(names, *t.Name)
				}
			}
		}
		text := strings.Join(names, "\n")
		if text != "" {
			text += "\n"
		}
		c.summary(map[string]any{"command": "tables list", "tables": names}, text, false)
		return exitOK
	case "create":
		tbl, err := c.table(cn, name)
		if err != nil {
			return c.fail(err)
		}
		err = tbl.CreateTable(ctx)
		switch {
		case errors.Is(err, entity.ErrAlreadyExists):
			c.summary(map[string]any{"command": "tables create", "table": name, "created": false}, fmt.Sprintf("table %s exists already\n", name), false)
			return exitOK
		case err != nil:
			return c.fail(err)
		}
		c.summary(map[string]any{"command": "tables create", "table": name, "created": true}, fmt.Sprintf("created table %s\n", name), false)
		return exitOK
	default:
		tbl, err := c.table(cn, name)
		if err != nil {
			return c.fail(err)
		}
		if err := tbl.DeleteTable(ctx); err != nil {
			return c.fail(err)
		}
		c.summary(map[string]any{"command": "tables delete", "table": name, "deleted": true}, fmt.Sprintf("deleted table %s\n", name), false)
		return exitOK
	}
}

// wrapService makes an aztables service error one that says whether the
// service was reached.
func wrapService(err error) error {
	var re *azcore.ResponseError
	switch {
	case errors.As(err, &re) && (re.StatusCode == 401 || re.StatusCode == 403):
		return fmt.Errorf("%w: %w", entity.ErrUnauthorized, err)
	case !errors.As(err, &re) && !errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: %w", entity.ErrUnreachable, err)
	}
	return err
}
