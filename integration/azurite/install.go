package azurite

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// npmFiles pins the Azurite that tablekit tests with. It is installed with
// `npm ci` when no other Azurite is found, so that a module fetched with
// `go get` (whose directory in the module cache is read-only) still gets
// exactly this version.
//
//go:embed package.json package-lock.json
var npmFiles embed.FS

// InstallCommand is the command that installs the pinned Azurite as a step
// of its own, with its progress on the terminal, before tests or programs
// need it.
const InstallCommand = "go run github.com/tablekit/tablekit/integration/azurite/devserver -install"

// Install installs the pinned Azurite with npm into the user's cache
// directory (os.UserCacheDir()/tablekit), once for every program and test
// binary of the machine (concurrent callers wait for the first), and
// returns its executable; when it is installed already, it returns at once
// and says nothing.
//
// The first installation takes about a minute and 365 MB, which
// should not pass in silence: Install says what it does, a line every ten
// seconds while npm runs, and how long it took, on progress — nil means the
// terminal (/dev/tty, which `go test ./...` does not capture, besides
// standard error) or standard error when there is no terminal. Start calls
// it when no other Azurite is found; the devserver command (go run
// github.com/tablekit/tablekit/integration/azurite/devserver -install) runs
// it as a step of its own.
func Install(ctx context.Context, progress io.Writer) (string, error) {
	version, digest, err := pinnedAzurite()
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("azurite: no cache directory to install Azurite into (%w): "+
			"run `npm install -g azurite@%s` or set %s", err, version, EnvAzurite)
	}
	base := filepath.Join(cache, "tablekit")
	dir := filepath.Join(base, "azurite-"+version+"-"+digest)
	bin := filepath.Join(dir, "node_modules", ".bin", binName)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("azurite: Azurite not found, and npm is not on PATH to install it: "+
			"install Node.js 22 (20 works, with a warning) with npm, then run `%s` (or `make azurite` in a tablekit clone) once; "+
			"or run `npm install -g azurite@%s`; or set %s to the path of an azurite executable, "+
			"or TABLEKIT_CONNECTION_STRING to use a real storage account", InstallCommand, version, EnvAzurite)
	}
	if progress == nil {
		w, closeTTY := terminal()
		defer closeTTY()
		progress = w
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("azurite: installing Azurite: %w", err)
	}
	unlock, err := lockFile(ctx, dir+".lock")
	if err != nil {
		return "", fmt.Errorf("azurite: installing Azurite: %w", err)
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // installed by another process while this one waited
	}

	// Install into a fresh directory and rename it into place, so that a
	// half-done installation is never taken for a complete one.
	tmp, err := os.MkdirTemp(base, "azurite-"+version+".tmp-")
	if err != nil {
		return "", fmt.Errorf("azurite: installing Azurite: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it private
		return "", fmt.Errorf("azurite: installing Azurite: %w", err)
	}
	for _, name := range []string{"package.json", "package-lock.json"} {
		data, _ := npmFiles.ReadFile(name)
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return "", fmt.Errorf("azurite: installing Azurite: %w", err)
		}
	}
	fmt.Fprintf(progress, "tablekit: installing azurite@%s with `npm ci` into %s, once for this machine (about 365 MB, 20-60 s)\n", version, dir)
	started := time.Now()
	stop := tick(progress, started)
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	stop()
	if err != nil {
		return "", &outputError{err: fmt.Errorf("azurite: `npm ci` of azurite@%s in %s failed: %w; "+
			"install it by hand with `npm install -g azurite@%s`, or set %s to an azurite executable",
			version, tmp, err, version, EnvAzurite), output: lastLines(string(out), 30)}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(bin); statErr == nil {
			return bin, nil
		}
		return "", fmt.Errorf("azurite: installing Azurite: %w", err)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("azurite: `npm ci` of azurite@%s left no %s: %w", version, bin, err)
	}
	fmt.Fprintf(progress, "tablekit: azurite@%s installed in %v\n", version, time.Since(started).Round(time.Second))
	return bin, nil
}

// tick reports every ten seconds that the install is still running, until
// stop is called.
func tick(progress io.Writer, started time.Time) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(progress, "tablekit: still installing Azurite (%v)\n", time.Since(started).Round(time.Second))
			}
		}
	}()
	return func() { close(done); <-finished }
}

// pinnedAzurite returns the Azurite version that the embedded package.json
// pins and a short digest of the lock file, which together name the
// installation directory.
func pinnedAzurite() (version, digest string, err error) {
	pkg, err := npmFiles.ReadFile("package.json")
	if err != nil {
		return "", "", err
	}
	var manifest struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(pkg, &manifest); err != nil {
		return "", "", fmt.Errorf("azurite: embedded package.json: %w", err)
	}
	version = manifest.Dependencies["azurite"]
	if version == "" {
		return "", "", errors.New("azurite: embedded package.json pins no azurite")
	}
	lock, err := npmFiles.ReadFile("package-lock.json")
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(lock)
	return version, hex.EncodeToString(sum[:4]), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "\t" + strings.Join(lines, "\n\t")
}
