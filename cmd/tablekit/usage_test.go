package main

import (
	"encoding/base64"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/state"
	"github.com/tablekit/tablekit/entity/sas"
)

// oneLine fails unless the output is exactly one line.
func requireOneLine(t *testing.T, what, out string) {
	t.Helper()
	out = strings.TrimSuffix(out, "\n")
	if out == "" || strings.Contains(out, "\n") {
		t.Errorf("%s: want one line, got %q", what, out)
	}
}

// unreachable is a connection string whose endpoints refuse connections.
const unreachable = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;TableEndpoint=http://127.0.0.1:1/devstoreaccount1/;BlobEndpoint=http://127.0.0.1:1/devstoreaccount1/;QueueEndpoint=http://127.0.0.1:1/devstoreaccount1/"

// Bad flags, bad connection strings and unreachable endpoints: one clear
// line on stderr and the documented exit code, before any request for the
// first two.
func TestUsageErrorsAreOneLine(t *testing.T) {
	t.Setenv(EnvConnectionString, "")
	cs := env.ConnectionString
	otherJob, _ := state.Encode(copyJob{V: 1, Cmd: "copy", Src: "elsewhere/Orders", Dst: "elsewhere/Other", Mode: "insert"})
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"nosuch"}, 2, "unknown command"},
		{[]string{"copy", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"copy", "--table", "Orders"}, 2, "no credentials"},
		{[]string{"copy", "--connection-string", "garbage", "--table", "Orders"}, 2, "connection string"},
		{[]string{"copy", "--connection-string", "AccountName=a;AccountKey=%%%;TableEndpoint=http://127.0.0.1:1/a/", "--table", "Orders"}, 2, "AccountKey"},
		{[]string{"copy", "--connection-string", cs, "--table", "Orders", "--mode", "clobber"}, 2, "--mode"},
		{[]string{"copy", "--connection-string", cs, "--table", "Orders", "--to-table", "Orders"}, 2, "destination is the source"},
		{[]string{"copy", "--connection-string", cs, "--table", "x", "--to-table", "Other"}, 2, "table name"},
		{[]string{"copy", "--connection-string", cs, "--table", "Orders", "--to-table", "Other", "--resume", "tk1.garbage"}, 2, "resume token"},
		{[]string{"copy", "--connection-string", cs, "--table", "Orders", "--to-table", "Other", "--resume", otherJob}, 2, "another job"},
		{[]string{"export", "--connection-string", cs, "--table", "Orders", "--out", "x.jsonl.gz", "--resume", otherJob}, 2, "another export"},
		{[]string{"copy", "--connection-string", cs, "--table", "Orders", "--to-table", "Other", "--shard", "3/3"}, 2, "--shard"},
		{[]string{"copy", "--connection-string", cs, "--table", "Orders", "--to-table", "Other", "--from-pk", "b", "--to-pk", "a"}, 2, "--to-pk"},
		{[]string{"copy", "--connection-string", cs, "--account-url", "https://a.table.core.windows.net/", "--table", "Orders"}, 2, "give one of"},
		{[]string{"query", "--connection-string", cs, "--table", "Orders", "--filter", "Name eq"}, 2, "filter"},
		{[]string{"query", "--connection-string", cs, "--table", "Orders", "--filter", "Name eq 'x' or Bad-Name eq 1"}, 2, "filter"},
		{[]string{"query", "--connection-string", cs, "--table", "Orders", "--format", "xml"}, 2, "--format"},
		{[]string{"export", "--connection-string", cs, "--table", "Orders"}, 2, "--out is required"},
		{[]string{"export", "--connection-string", cs, "--table", "Orders", "--out", "x.csv", "--resume", "tk1.x"}, 2, "not resumable"},
		{[]string{"export", "--connection-string", cs, "--table", "Orders", "--out", "-", "--split-size", "1MB"}, 2, "--split-size"},
		{[]string{"export", "--connection-string", cs, "--table", "Orders", "--out", "x", "--split-size", "lots"}, 2, "--split-size"},
		{[]string{"import", "--connection-string", cs, "--table", "Orders", "--in", "/no/such/file"}, 2, "--in"},
		{[]string{"import", "--connection-string", cs, "--table", "Orders", "--in", "-", "--resume", "tk1.x"}, 2, "stdin"},
		{[]string{"delete", "--connection-string", cs, "--table", "Orders"}, 2, "say what to delete"},
		{[]string{"delete", "--connection-string", cs, "--table", "Orders", "--all", "--pk", "a"}, 2, "--all"},
		{[]string{"tables", "delete", "Orders", "--connection-string", cs}, 2, "--yes"},
		{[]string{"tables", "frobnicate", "--connection-string", cs}, 2, "unknown tables command"},
		{[]string{"queue", "peek", "--connection-string", cs}, 2, "--queue is required"},
		{[]string{"queue", "purge", "--connection-string", cs, "--queue", "orders"}, 2, "--yes"},
		{[]string{"plan", "--connection-string", cs, "--table", "Orders"}, 2, "--shards"},
		{[]string{"query", "--connection-string", unreachable, "--table", "Orders", "--retries", "0"}, 1, "cannot reach the service"},
		{[]string{"copy", "--connection-string", unreachable, "--table", "Orders", "--to-table", "Other", "--retries", "0"}, 1, "cannot reach the service"},
		{[]string{"tables", "list", "--connection-string", unreachable, "--retries", "0"}, 1, "cannot reach the service"},
		{[]string{"queue", "peek", "--connection-string", unreachable, "--queue", "orders", "--retries", "0"}, 1, "connection refused"},
	} {
		r := tk(t, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.says) {
			t.Errorf("tablekit %s: exit %d, want %d saying %q:\n%s", strings.Join(redactArgs(c.args), " "), r.code, c.code, c.says, r.stderr)
			continue
		}
		requireOneLine(t, strings.Join(redactArgs(c.args), " "), r.stderr)
		if strings.Contains(r.stderr+r.stdout, "Eby8vdM02x") {
			t.Errorf("the account key is in the output of %v", redactArgs(c.args))
		}
	}
	// --help: the command's usage with an example, on stdout, exit 0.
	for _, cmd := range commands() {
		r := tk(t, cmd.name, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "Example:") || !strings.Contains(r.stdout, "Exit codes") || r.stderr != "" {
			t.Errorf("%s --help: %s", cmd.name, r)
		}
	}
	if r := tk(t, "--help"); r.code != 0 || !strings.Contains(r.stdout, "Exit codes") {
		t.Errorf("--help: %s", r)
	}
	if r := tk(t); r.code != 2 {
		t.Errorf("no arguments: %s", r)
	}
	// The real process's exit status.
	if r := startBin(t, "copy", "--bogus").wait(); r.code != 2 {
		t.Errorf("binary: %s", r)
	}
	if r := startBin(t, "query", "--connection-string", unreachable, "--table", "Orders", "--retries", "0").wait(); r.code != 1 {
		t.Errorf("binary: %s", r)
	}
}

// Credentials reach the command from the environment as well.
func TestConnectionStringFromTheEnvironment(t *testing.T) {
	_, name := newTable(t)
	t.Setenv(EnvConnectionString, env.ConnectionString)
	must(t, 0, "query", "--table", name)
}

// No account key and no SAS signature appears in any output: not in
// errors (a wrong key, a wrong signature, a bad SAS, an unreachable
// endpoint), not in progress lines, tokens or summaries.
func testNoSecretInAnyOutput(t *testing.T, s *source) {
	name, cs := s.name, env.ConnectionString
	key := regexp.MustCompile(`AccountKey=([^;]+)`).FindStringSubmatch(cs)[1]
	wrongKey := base64.StdEncoding.EncodeToString([]byte("this is not the account key of devstoreaccount1!!"))
	wrong := strings.Replace(cs, key, wrongKey, 1)
	iss, err := sas.NewIssuerFromConnectionString(cs, sas.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sasURL, err := iss.TableURL(sas.TableSAS{Table: name, Permissions: sas.Read})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(sasURL)
	sig := u.Query().Get("sig")
	q := u.Query()
	q.Set("sig", base64.StdEncoding.EncodeToString([]byte("a forged signature of 32 bytes!!")))
	u.RawQuery = q.Encode()
	forged := u.String()
	forgedSig := q.Get("sig")
	out := t.TempDir() + "/x.jsonl.gz"
	runs := [][]string{
		{"query", "--connection-string", cs, "--table", name, "--top", "3"},
		{"query", "--sas-url", sasURL, "--top", "3"},
		{"query", "--sas-url", forged, "--retries", "0"},
		{"query", "--connection-string", wrong, "--table", name, "--retries", "0"},
		{"copy", "--connection-string", wrong, "--table", name, "--to-table", "Other", "--retries", "0"},
		{"copy", "--sas-url", sasURL, "--to-connection-string", cs, "--to-table", "SecretCopy", "--json", "--progress-interval", "1ms", "--filter", "PartitionKey eq 'p001'"},
		{"export", "--connection-string", cs, "--table", name, "--out", out, "--progress-interval", "1ms", "--to-pk", "p010"},
		{"stats", "--connection-string", cs, "--table", name, "--json"},
		{"stats", "--connection-string", cs + ";SharedAccessSignature=sv=2019-02-02&sig=" + url.QueryEscape(forgedSig), "--table", name},
		{"query", "--connection-string", unreachable, "--table", name, "--retries", "0"},
		{"tables", "list", "--connection-string", wrong, "--retries", "0"},
		{"copy", "--connection-string", "AccountName=x;AccountKey=" + key + ";TableEndpoint=ftp://nowhere", "--table", name},
	}
	for _, args := range runs {
		r := tk(t, args...)
		all := r.stdout + r.stderr
		for _, secret := range []string{key, url.QueryEscape(key), wrongKey, sig, url.QueryEscape(sig), forgedSig, url.QueryEscape(forgedSig)} {
			if strings.Contains(all, secret) {
				t.Errorf("tablekit %s printed a secret:\n%s", args[0], all)
			}
		}
	}
	// And the binary, whose progress lines go to a pipe.
	r := startBin(t, "copy", "--sas-url", sasURL, "--to-connection-string", cs, "--to-table", "SecretCopy2", "--progress-interval", "1ms", "--filter", "PartitionKey eq 'p002'").wait()
	if r.code != 0 || strings.Contains(r.stdout+r.stderr, sig) || strings.Contains(r.stdout+r.stderr, key) {
		t.Errorf("binary: %s", r)
	}
}

// The command links no package testing (nor integration, which does):
// what go install builds is a program, not a test helper.
func TestLinksNoTesting(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "testing" || strings.HasPrefix(p, "github.com/tablekit/tablekit/integration") {
			t.Errorf("tablekit links %s", p)
		}
	}
}
