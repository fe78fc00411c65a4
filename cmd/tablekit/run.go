package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes.
const (
	exitOK      = 0 // done
	exitFailed  = 1 // failed, or interrupted (the message says how to resume)
	exitUsage   = 2 // bad flags or arguments, refused before any request
	exitPartial = 3 // done, with some items failed (each reported)
)

type command struct {
	name    string
	summary string
	run     func(c *cli, args []string) int
}

func commands() []command {
	return []command{
		{"copy", "copy a table (or part of one) to a table in the same or another account", runCopy},
		{"export", "write a table to a file, stdout or a blob (gzip JSON Lines or Storage Explorer CSV)", runExport},
		{"import", "write a file, stdin or a blob back into a table, resumably", runImport},
		{"query", "print the entities a filter selects, as JSON Lines, CSV or an aligned table", runQuery},
		{"stats", "count entities, partitions and bytes, and what the scan cost", runStats},
		{"delete", "delete entities by partition, filter or key range, in transactions of 100", runDelete},
		{"queue", "peek, replay and purge the queues and poison queues of patterns/eventual", runQueue},
		{"tables", "list, create and delete tables", runTables},
		{"plan", "cut a table's PartitionKey space into ranges for --shard", runPlan},
	}
}

const globalUsage = `tablekit: the jobs around the code for Azure Table storage (and Azurite).

Usage:
  tablekit <command> [flags]
  tablekit <command> --help

Commands:
%s
Credentials (every command; never printed — keys and signatures are redacted):
  --connection-string STR   a storage connection string (or TABLEKIT_CONNECTION_STRING)
  --account-url URL         https://NAME.table.core.windows.net/ with azidentity's default credential
  --sas-url URL             an account SAS URL, or a table SAS URL (https://NAME.table.core.windows.net/TABLE?sv=…)

Output: a progress line on a terminal (stderr), plain lines every --progress-interval
otherwise, --json for machines (progress events on stderr, the summary on stdout).

Exit codes:
  0  done
  1  failed, or interrupted (Ctrl-C): the message says how to resume
  2  usage: bad flags, arguments or credentials, refused before any request
  3  done, but some items failed (each one reported)

Example:
  export TABLEKIT_CONNECTION_STRING='DefaultEndpointsProtocol=https;AccountName=…;AccountKey=…'
  tablekit copy --table Orders --to-connection-string "$OTHER" --mode insert-or-skip
`

func usageText() string {
	var b strings.Builder
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	return fmt.Sprintf(globalUsage, b.String())
}

// run is the whole command line: tests call it in-process, main with the
// process's streams and a context that ends at the first SIGINT or SIGTERM.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		io.WriteString(stderr, usageText())
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(args) > 1 {
			return run(ctx, []string{args[1], "--help"}, stdin, stdout, stderr)
		}
		io.WriteString(stdout, usageText())
		return exitOK
	}
	for _, cmd := range commands() {
		if cmd.name == name {
			c := newCLI(ctx, name, stdin, stdout, stderr)
			return cmd.run(c, args[1:])
		}
	}
	fmt.Fprintf(stderr, "tablekit: unknown command %q (commands: %s; tablekit --help)\n", name, commandNames())
	return exitUsage
}

func commandNames() string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
