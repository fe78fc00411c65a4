package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/tablekit/tablekit/account"
	"github.com/tablekit/tablekit/cmd/tablekit/internal/redact"
	"github.com/tablekit/tablekit/cmd/tablekit/internal/state"
	"github.com/tablekit/tablekit/cost"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/entity/filter"
	"github.com/tablekit/tablekit/entity/sas"
	"github.com/tablekit/tablekit/throttle"
)

// EnvConnectionString is read when no credential flag is given.
const EnvConnectionString = "TABLEKIT_CONNECTION_STRING"

// cli is one command's run: its streams, its settings and what it shares
// between its clients (the Limiter, the Meter, the redactor).
type cli struct {
	ctx    context.Context // ends at the first interrupt: stop taking new work
	name   string
	stdin  io.Reader
	data   io.Writer // stdout as is: the command's data (query rows, an export to -)
	out    io.Writer // stdout, redacted: summaries
	errw   io.Writer // stderr, redacted, one Write at a time: messages and progress
	outTTY bool
	errTTY bool
	red    *redact.Redactor

	json     bool
	quiet    bool
	interval time.Duration
	grace    time.Duration
	retries  int
	maxRPS   float64

	once    sync.Once
	limiter *throttle.Limiter
	limErr  error
	meter   *cost.Meter

	containers []*container.Client // of the blobs named (blob.go)
	help       func()
}

// lockedWriter makes each Write whole: messages, events and progress
// lines come from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func newCLI(ctx context.Context, name string, stdin io.Reader, stdout, stderr io.Writer) *cli {
	red := redact.New()
	return &cli{
		ctx: ctx, name: name, stdin: stdin,
		data: stdout, out: redact.Writer(stdout, red), errw: &lockedWriter{w: redact.Writer(stderr, red)},
		outTTY: isTerminal(stdout), errTTY: isTerminal(stderr),
		red: red, meter: cost.NewMeter(),
	}
}

// flags returns a FlagSet for the command with the flags every command has.
func (c *cli) flags(usage, example string) *flag.FlagSet {
	fs := flag.NewFlagSet("tablekit "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&c.json, "json", false, "machine output: progress events on stderr and the summary on stdout as JSON lines")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress output")
	fs.DurationVar(&c.interval, "progress-interval", 10*time.Second, "how often progress is printed when stderr is not a terminal (and with --json)")
	fs.DurationVar(&c.grace, "grace", 15*time.Second, "after Ctrl-C, how long requests in flight may finish before they are abandoned")
	fs.IntVar(&c.retries, "retries", 3, "how many times a failed request is retried (azcore's exponential backoff)")
	fs.Float64Var(&c.maxRPS, "max-rps", 0, "requests per second per account at most (0: the service's target of 20,000); per-partition pacing is always on")
	fs.Usage = func() {} // errors are one line (parse); --help prints c.help
	c.help = func() {
		fmt.Fprintf(c.out, "Usage: tablekit %s %s\n\n", c.name, usage)
		fmt.Fprintf(c.out, "Example:\n%s\n\nFlags:\n", example)
		fs.SetOutput(c.out)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		fmt.Fprintf(c.out, "\nExit codes: 0 done, 1 failed or interrupted, 2 usage, 3 done with some items failed.\n")
	}
	return fs
}

// parse parses args; done is true when the command must return code at
// once (--help, or a usage error already reported).
func (c *cli) parse(fs *flag.FlagSet, args []string, positional int) (code int, done bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.help()
			return exitOK, true
		}
		return c.fail(usagef("%v", err)), true
	}
	if fs.NArg() > positional {
		return c.fail(usagef("unexpected argument %q", fs.Arg(positional))), true
	}
	if c.interval <= 0 {
		return c.fail(usagef("--progress-interval must be positive")), true
	}
	if c.retries < 0 || c.maxRPS < 0 || c.grace < 0 {
		return c.fail(usagef("--retries, --max-rps and --grace cannot be negative")), true
	}
	return 0, false
}

// usageError is bad input refused before any request: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// isUsage reports whether err is bad input refused before any request.
func isUsage(err error) bool {
	var ue *usageError
	return errors.As(err, &ue) || errors.Is(err, entity.ErrInvalid) || errors.Is(err, filter.ErrInvalidFilter) ||
		errors.Is(err, account.ErrInvalid) || errors.Is(err, sas.ErrInvalid) || errors.Is(err, state.ErrBadToken) ||
		errors.Is(err, account.ErrNoEndpoint)
}

var spaces = regexp.MustCompile(`\s*\n\s*`)

// oneLine is err as one line: what the user needs, without the HTTP
// exchange azcore puts in some messages.
func oneLine(err error) string {
	s := err.Error()
	var re *azcore.ResponseError
	if errors.As(err, &re) && strings.Contains(s, "\n") {
		// azcore's message holds the request and the whole response;
		// keep what precedes it and the service's code.
		first, _, _ := strings.Cut(s, "\n")
		s = fmt.Sprintf("%s (HTTP %d %s)", strings.TrimRight(first, ": "), re.StatusCode, re.ErrorCode)
	}
	s = spaces.ReplaceAllString(s, "; ")
	if len(s) > 1500 {
		s = s[:1500] + "…"
	}
	return s
}

// fail prints err as one line and returns its exit code.
func (c *cli) fail(err error) int {
	code := exitFailed
	if isUsage(err) {
		code = exitUsage
	}
	msg := oneLine(err)
	switch {
	case errors.Is(err, entity.ErrUnreachable):
		msg = "cannot reach the service (check the endpoint and the network): " + msg
	case errors.Is(err, entity.ErrUnauthorized):
		msg = "the service refused the credential (check the key, SAS or role): " + msg
	case errors.Is(err, entity.ErrTableNotFound):
		msg = "no such table: " + msg
	}
	if code == exitUsage {
		msg += " (tablekit " + c.name + " --help)"
	}
	if c.json {
		c.event(map[string]any{"event": "error", "command": c.name, "exit": code, "error": msg})
	} else {
		fmt.Fprintf(c.errw, "tablekit %s: %s\n", c.name, msg)
	}
	return code
}

// say prints a message line on stderr (not with --json or --quiet).
func (c *cli) say(format string, a ...any) {
	if c.json || c.quiet {
		return
	}
	fmt.Fprintf(c.errw, "tablekit %s: %s\n", c.name, fmt.Sprintf(format, a...))
}

// warn prints a message line on stderr, also with --quiet.
func (c *cli) warn(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if c.json {
		c.event(map[string]any{"event": "warning", "command": c.name, "message": msg})
		return
	}
	fmt.Fprintf(c.errw, "tablekit %s: %s\n", c.name, msg)
}

// event writes one JSON line on stderr.
func (c *cli) event(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	c.errw.Write(append(b, '\n'))
}

// itemFailed reports one item (an entity, a line) that failed alone.
func (c *cli) itemFailed(what string, line int, pk, rk string, err error) {
	if c.json {
		ev := map[string]any{"event": "item", "command": c.name, "outcome": what, "partitionKey": pk, "rowKey": rk, "error": oneLine(err)}
		if line > 0 {
			ev["line"] = line
		}
		c.event(ev)
		return
	}
	where := fmt.Sprintf("PartitionKey %q, RowKey %q", pk, rk)
	if line > 0 {
		where = fmt.Sprintf("line %d (%s)", line, where)
	}
	fmt.Fprintf(c.errw, "tablekit %s: %s: %s: %s\n", c.name, what, where, oneLine(err))
}

// summary prints a command's result: JSON with --json, else the text.
// toStderr is for commands whose stdout carries data.
func (c *cli) summary(v any, text string, toStderr bool) {
	w := c.out
	if toStderr {
		w = c.errw
	}
	if c.json {
		b, _ := json.Marshal(v)
		w.Write(append(b, '\n'))
		return
	}
	if text != "" && !(toStderr && c.quiet) {
		io.WriteString(w, text)
	}
}

// interrupted reports a stop by Ctrl-C with the way to resume.
func (c *cli) interrupted(done string, token, checkpointFile string) int {
	if c.json {
		ev := map[string]any{"event": "interrupted", "command": c.name, "done": done, "exit": exitFailed}
		if token != "" {
			ev["resume"] = token
		}
		c.event(ev)
		return exitFailed
	}
	fmt.Fprintf(c.errw, "tablekit %s: interrupted: %s; nothing is half-written.\n", c.name, done)
	if token != "" {
		fmt.Fprintf(c.errw, "tablekit %s: to resume, run the same command with: --resume %s\n", c.name, token)
		if checkpointFile != "" {
			fmt.Fprintf(c.errw, "tablekit %s: (or with --resume @%s)\n", c.name, checkpointFile)
		}
	} else {
		fmt.Fprintf(c.errw, "tablekit %s: run the same command again to go on.\n", c.name)
	}
	return exitFailed
}

// stopped reports whether the command was asked to stop.
func (c *cli) stopped() bool { return c.ctx.Err() != nil }

// workContext is the context of requests: it ends --grace after the
// command was asked to stop, so that requests in flight finish and what
// they did is counted, and at once when cancel is called.
func (c *cli) workContext() (context.Context, context.CancelFunc) {
	work, cancel := context.WithCancel(context.WithoutCancel(c.ctx))
	stop := context.AfterFunc(c.ctx, func() { time.AfterFunc(c.grace, cancel) })
	return work, func() { stop(); cancel() }
}

// --- credentials ---

// connFlags are one account's credential flags.
type connFlags struct {
	prefix                      string
	connStr, accountURL, sasURL string
}

func (f *connFlags) register(fs *flag.FlagSet, prefix, what string) {
	f.prefix = prefix
	env := ""
	if prefix == "" {
		env = " (default: $" + EnvConnectionString + ")"
	}
	if prefix != "" {
		env = " (default: the table's account)"
		if prefix == "to-" {
			env = " (default: the source account)"
		}
	}
	fs.StringVar(&f.connStr, prefix+"connection-string", "", "storage connection string of the "+what+" account"+env)
	fs.StringVar(&f.accountURL, prefix+"account-url", "", "account URL of the "+what+" account (https://NAME.table.core.windows.net/), with azidentity's default credential")
	fs.StringVar(&f.sasURL, prefix+"sas-url", "", "SAS URL of the "+what+": an account SAS URL, or a table SAS URL naming the table")
}

func (f *connFlags) given() bool { return f.connStr != "" || f.accountURL != "" || f.sasURL != "" }

// conn is an account, or a table reached through a table SAS URL.
type conn struct {
	acct     *account.Account
	tableSAS string // a table SAS URL: sasTable is the only table
	sasTable string
	label    string // where it points, without secrets
}

func (c *cli) throttle() (*throttle.Limiter, error) {
	c.once.Do(func() {
		c.limiter, c.limErr = throttle.NewLimiter(throttle.Config{AccountRate: c.maxRPS})
	})
	return c.limiter, c.limErr
}

func (c *cli) azOptions() (azcore.ClientOptions, error) {
	var o azcore.ClientOptions
	o.Retry.MaxRetries = int32(c.retries)
	if c.retries == 0 {
		o.Retry.MaxRetries = -1
	}
	o.Telemetry.ApplicationID = "tablekit-cli"
	return o, nil
}

func (c *cli) accountOptions() (*account.Options, error) {
	lim, err := c.throttle()
	if err != nil {
		return nil, err
	}
	co, err := c.azOptions()
	if err != nil {
		return nil, err
	}
	return &account.Options{ClientOptions: co, Meter: c.meter, Limiter: lim}, nil
}

// connect builds the account f names; with useEnv, TABLEKIT_CONNECTION_STRING
// stands in when no flag is given.
func (c *cli) connect(f *connFlags, useEnv bool) (*conn, error) {
	n := 0
	for _, s := range []string{f.connStr, f.accountURL, f.sasURL} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return nil, usagef("give one of --%sconnection-string, --%saccount-url and --%ssas-url", f.prefix, f.prefix, f.prefix)
	}
	cs := f.connStr
	if n == 0 && useEnv {
		cs = os.Getenv(EnvConnectionString)
		if cs == "" {
			return nil, usagef("no credentials: give --connection-string, --account-url or --sas-url, or set %s", EnvConnectionString)
		}
	}
	for _, s := range []string{cs, f.sasURL} {
		c.red.Add(redact.Secrets(s)...)
	}
	opts, err := c.accountOptions()
	if err != nil {
		return nil, err
	}
	switch {
	case cs != "":
		a, err := account.NewFromConnectionString(cs, opts)
		if err != nil {
			return nil, err
		}
		return &conn{acct: a, label: a.Endpoints().Table}, nil
	case f.accountURL != "":
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("no Microsoft Entra credential for --%saccount-url: %w", f.prefix, err)
		}
		a, err := account.New(f.accountURL, cred, opts)
		if err != nil {
			return nil, err
		}
		return &conn{acct: a, label: a.Endpoints().Table}, nil
	default:
		u, err := url.Parse(f.sasURL)
		if err != nil || u.Host == "" {
			return nil, usagef("--%ssas-url is not a URL", f.prefix)
		}
		if table := sasTableName(u); table != "" {
			return &conn{tableSAS: f.sasURL, sasTable: table, label: u.Scheme + "://" + u.Host + strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), table)}, nil
		}
		a, err := account.NewFromSASURL(f.sasURL, opts)
		if err != nil {
			return nil, err
		}
		return &conn{acct: a, label: a.Endpoints().Table}, nil
	}
}

// sasTableName is the table a SAS URL's path names, "" for a service URL.
// An emulator's path starts with the account name.
func sasTableName(u *url.URL) string {
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(segs) == 1 && segs[0] == "" {
		return ""
	}
	host := u.Hostname()
	emulator := !strings.Contains(host, ".") || strings.Count(host, ".") == 3 && strings.Trim(host, "0123456789.") == ""
	if emulator {
		if len(segs) < 2 {
			return ""
		}
		return segs[len(segs)-1]
	}
	return segs[len(segs)-1]
}

// table opens a table of the account (or the SAS URL's table).
func (c *cli) table(cn *conn, name string) (*entity.Table[entity.DynamicEntity], error) {
	if cn.tableSAS != "" {
		if name != "" && !strings.EqualFold(name, cn.sasTable) {
			return nil, usagef("the SAS URL names table %q, not %q", cn.sasTable, name)
		}
		lim, err := c.throttle()
		if err != nil {
			return nil, err
		}
		co, _ := c.azOptions()
		co.PerRetryPolicies = append(co.PerRetryPolicies, c.meter.Policy(), policy.Policy(lim))
		return sas.OpenTable[entity.DynamicEntity](cn.tableSAS, entity.ClientOptions(&aztables.ClientOptions{ClientOptions: co}))
	}
	if name == "" {
		return nil, usagef("--table is required")
	}
	client, err := cn.acct.Table(name)
	if err != nil {
		return nil, err
	}
	return entity.NewTable[entity.DynamicEntity](client)
}

// tableName is --table, or the SAS URL's table.
func tableName(cn *conn, flagValue string) string {
	if flagValue == "" && cn != nil {
		return cn.sasTable
	}
	return flagValue
}

// parseFilter reads --filter through package filter's checks.
func parseFilter(text string) (filter.Expr, error) {
	e, err := filter.Parse(text)
	if err != nil {
		return e, fmt.Errorf("--filter: %w", err)
	}
	return e, nil
}

// multiFlag is a flag that may be given several times.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }
