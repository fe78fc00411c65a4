package readme

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// commandsMarker opens the README's shell block of the commands that run
// the quick start in a new module.
const commandsMarker = "<!-- commands: new module"

// module is tablekit's module path.
const module = "github.com/tablekit/tablekit"

// newModuleCommands returns the lines of the shell block after the marker,
// without comments and blank lines.
func newModuleCommands(readme []byte) []string {
	var lines []string
	marked, inside := false, false
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, commandsMarker):
			marked = true
		case marked && !inside && strings.HasPrefix(line, "```"):
			inside = true
		case inside && line == "```":
			return lines
		case inside:
			if i := strings.Index(line, " #"); i >= 0 {
				line = strings.TrimSpace(line[:i])
			}
			if line != "" && !strings.HasPrefix(line, "#") {
				lines = append(lines, line)
			}
		}
	}
	return nil
}

// TestNewModuleCommands runs the README's commands for a new module as
// written, in a new module in a temporary directory, offline: the one
// difference is how github.com/tablekit/tablekit@latest resolves — to this
// tree, through a replace directive, with the other modules from the module
// cache (where `go mod tidy` cannot fetch what is missing, and goes on with
// -e). `go run` is checked by building what it would run, and
// `go run pkg@latest` also by the rule that makes the go command refuse it:
// tablekit's go.mod must hold no replace or exclude directive.
func TestNewModuleCommands(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := newModuleCommands(readme)
	want := []string{"go mod init ", "go get " + module + "@latest", "go mod tidy", "go run " + module + "/integration/azurite/devserver@latest", "go run ."}
	if len(cmds) != len(want) {
		t.Fatalf("the README's new-module commands are %q; want %d lines starting %q", cmds, len(want), want)
	}
	for i, w := range want {
		if !strings.HasPrefix(cmds[i], w) {
			t.Fatalf("new-module command %d is %q, want it to start with %q", i+1, cmds[i], w)
		}
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed: %v", err)
	}
	quickstart, err := os.ReadFile(filepath.Join(root, "examples", "quickstart", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	dir, bin := t.TempDir(), t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GOFLAGS", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GOWORK":
		default:
			env = append(env, kv)
		}
	}
	env = append(env, "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOWORK=off")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(goTool, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, line := range cmds {
		args := strings.Fields(line)[1:]
		switch {
		case args[0] == "mod" && args[1] == "init":
			run(args...)
			// "save the program below as main.go"
			if err := os.WriteFile(filepath.Join(dir, "main.go"), quickstart, 0o600); err != nil {
				t.Fatal(err)
			}
		case args[0] == "get" && args[1] == module+"@latest":
			run("mod", "edit", "-require="+module+"@v0.0.0", "-replace="+module+"="+root)
			run("get", module)
		case args[0] == "run" && strings.HasSuffix(args[1], "@latest"):
			pkg := strings.TrimSuffix(args[1], "@latest")
			gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
			if err != nil {
				t.Fatal(err)
			}
			for l := range strings.Lines(string(gomod)) {
				if f := strings.Fields(l); len(f) > 0 && (f[0] == "replace" || f[0] == "exclude") {
					t.Errorf("tablekit's go.mod has %q: `go run %s` refuses a module with replace or exclude directives", strings.TrimSpace(l), args[1])
				}
			}
			run("build", "-o", bin+string(filepath.Separator), pkg)
		case args[0] == "run" && args[1] == ".":
			run("build", "-o", bin+string(filepath.Separator), ".")
		case args[0] == "mod" && args[1] == "tidy":
			// Offline, tidy cannot fetch what the tests of tablekit's own
			// dependencies import (testify…), which online it records too:
			// -e goes on past them. The builds below show that what the
			// program needs was found.
			run("mod", "tidy", "-e")
		default:
			run(args...)
		}
	}
	for _, name := range []string{"devserver", "hello"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			t.Errorf("nothing built as %s: %v", name, err)
		}
	}
}

func TestNewModuleCommandsParse(t *testing.T) {
	readme := "x\n" + commandsMarker + " -->\n```sh\ngo mod init a   # comment\n\n# a line of comment\ngo run .\n```\n```sh\nnot this\n```\n"
	got := newModuleCommands([]byte(readme))
	if strings.Join(got, "|") != "go mod init a|go run ." {
		t.Errorf("newModuleCommands = %q", got)
	}
}
