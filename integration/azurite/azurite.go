package azurite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/account"
)

const (
	// defaultReadyTimeout bounds the wait for a started Azurite to answer,
	// unless TABLEKIT_AZURITE_TIMEOUT says otherwise.
	defaultReadyTimeout = 60 * time.Second
	// bindAttempts is how many sets of ports are tried when Azurite finds a
	// port taken between the choice and its own bind.
	bindAttempts = 5
	// stopTimeout bounds the wait for the killed process group to vanish.
	stopTimeout = 10 * time.Second
)

// The development account that Azurite serves.
const (
	AccountName = account.DevelopmentAccountName
	AccountKey  = account.DevelopmentAccountKey
)

// Environment variables read by Start.
const (
	// EnvAzurite names a variable holding the path of the azurite executable
	// to run, overriding the search described in the package documentation.
	EnvAzurite = "TABLEKIT_AZURITE"
	// EnvTimeout names a variable holding how long Start waits for a
	// started Azurite to answer, as a Go duration; 60s when unset.
	EnvTimeout = "TABLEKIT_AZURITE_TIMEOUT"
)

// Options change what Start does. The zero value (or nil) starts Azurite on
// free loopback ports.
type Options struct {
	// BlobPort, QueuePort and TablePort are the loopback ports to listen
	// on; 0 means free ports chosen by Start (all three are chosen together:
	// set all or none). 10000, 10001 and 10002 are the ports that
	// "UseDevelopmentStorage=true" stands for.
	BlobPort, QueuePort, TablePort int
	// Progress receives what an installation of Azurite says (see
	// Install); nil means the terminal, or standard error when there is none.
	Progress io.Writer
}

// Server is a running Azurite, in memory, on loopback ports, serving the
// development account.
type Server struct {
	// ConnectionString reaches the three services, with explicit endpoints
	// (which every SDK accepts, unlike UseDevelopmentStorage=true).
	ConnectionString string
	// Service endpoints, each ending with '/'.
	TableEndpoint, QueueEndpoint, BlobEndpoint string
	// StartupDuration is how long Start took until all three services
	// answered (installation excluded).
	StartupDuration time.Duration

	proc      *process
	closeOnce sync.Once
	closeErr  error
}

// Start finds Azurite (installing it on first use, see the package
// documentation), starts it in memory on loopback ports and waits (at most
// TABLEKIT_AZURITE_TIMEOUT, 60 s by default, or until ctx ends) until the
// table, queue and blob services all answer a request. The caller must call
// Close. A failure is one line; Output gives the end of what Azurite printed.
func Start(ctx context.Context, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	fixed := o.BlobPort != 0 || o.QueuePort != 0 || o.TablePort != 0
	if fixed && (o.BlobPort <= 0 || o.QueuePort <= 0 || o.TablePort <= 0) {
		return nil, fmt.Errorf("azurite: ports %d (blob), %d (queue), %d (table): set all three, or none for free ones", o.BlobPort, o.QueuePort, o.TablePort)
	}
	bin, err := Find(ctx, o.Progress)
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	for attempt := 1; ; attempt++ {
		ports := []int{o.BlobPort, o.QueuePort, o.TablePort}
		if !fixed {
			if ports, err = freePorts(3); err != nil {
				return nil, fmt.Errorf("azurite: choosing ports: %w", err)
			}
		}
		p, err := startProcess(bin, azuriteArgs(ports[0], ports[1], ports[2]))
		if err != nil {
			return nil, fmt.Errorf("azurite: starting %s: %w", bin, err)
		}
		s := newServer(ports[0], ports[1], ports[2])
		err = s.waitReady(ctx, p)
		if err == nil {
			s.proc = p
			s.StartupDuration = time.Since(begin)
			return s, nil
		}
		stopErr := p.stop()
		if errors.Is(err, errPortTaken) && attempt < bindAttempts && !fixed {
			continue
		}
		if stopErr != nil {
			err = fmt.Errorf("%w (and stopping it: %v)", err, stopErr)
		}
		return nil, &outputError{err: fmt.Errorf("azurite: %s on ports %v: %w", bin, ports, err), output: p.log.tail(40)}
	}
}

// Close stops Azurite, with every process of its process group, and waits
// until they are gone. It may be called more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.proc != nil {
			s.closeErr = s.proc.stop()
		}
	})
	return s.closeErr
}

// PID returns the process id of the Azurite process.
func (s *Server) PID() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.pid
}

// outputError is a failure to start or install Azurite, in one line, with
// the end of what the process printed, which Main shows after it.
type outputError struct {
	err    error
	output string
}

func (e *outputError) Error() string { return e.err.Error() }
func (e *outputError) Unwrap() error { return e.err }

// Output returns the end of what Azurite (or npm installing it) printed,
// which an error of Start carries, indented, for a message after the error;
// "" for another error.
func Output(err error) string {
	var oe *outputError
	if errors.As(err, &oe) {
		return oe.output
	}
	return ""
}

func azuriteArgs(blob, queue, table int) []string {
	return []string{
		"--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(blob),
		"--queueHost", "127.0.0.1", "--queuePort", strconv.Itoa(queue),
		"--tableHost", "127.0.0.1", "--tablePort", strconv.Itoa(table),
		"--silent", "--disableTelemetry", "--skipApiVersionCheck", "--inMemoryPersistence",
	}
}

// newServer returns the connection string and endpoints of an Azurite on
// the given ports. Every endpoint keeps its trailing slash (aztables uses
// the endpoint as given, and GetTableSASURL needs the slash).
func newServer(blob, queue, table int) *Server {
	s := &Server{
		TableEndpoint: fmt.Sprintf("http://127.0.0.1:%d/%s/", table, AccountName),
		QueueEndpoint: fmt.Sprintf("http://127.0.0.1:%d/%s/", queue, AccountName),
		BlobEndpoint:  fmt.Sprintf("http://127.0.0.1:%d/%s/", blob, AccountName),
	}
	s.ConnectionString = fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;QueueEndpoint=%s;BlobEndpoint=%s;",
		AccountName, AccountKey, s.TableEndpoint, s.QueueEndpoint, s.BlobEndpoint)
	return s
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

var errPortTaken = errors.New("a port was taken before Azurite could bind it")

// waitReady polls the three services with real requests until each has
// answered once, the process dies, readyTimeout passes or ctx ends.
func (s *Server) waitReady(ctx context.Context, p *process) error {
	timeout, err := readyTimeout()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// Probes make one try each: the loop below is the retry.
	probeOpts := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}
	tables, err := aztables.NewServiceClientFromConnectionString(s.ConnectionString, &aztables.ClientOptions{ClientOptions: probeOpts})
	if err != nil {
		return err
	}
	queues, err := azqueue.NewServiceClientFromConnectionString(s.ConnectionString, &azqueue.ClientOptions{ClientOptions: probeOpts})
	if err != nil {
		return err
	}
	blobs, err := azblob.NewClientFromConnectionString(s.ConnectionString, &azblob.ClientOptions{ClientOptions: probeOpts})
	if err != nil {
		return err
	}
	probes := []struct {
		name  string
		probe func(context.Context) error
		err   error
		ok    bool
	}{
		{name: "table", probe: func(ctx context.Context) error {
			top := int32(1)
			_, err := tables.NewListTablesPager(&aztables.ListTablesOptions{Top: &top}).NextPage(ctx)
			return err
		}},
		{name: "queue", probe: func(ctx context.Context) error {
			_, err := queues.GetServiceProperties(ctx, nil)
			return err
		}},
		{name: "blob", probe: func(ctx context.Context) error {
			_, err := blobs.ServiceClient().GetProperties(ctx, nil)
			return err
		}},
	}

	delay := 20 * time.Millisecond
	for {
		select {
		case <-p.done:
			if strings.Contains(p.log.String(), "EADDRINUSE") {
				return errPortTaken
			}
			return fmt.Errorf("exited before answering: %v", p.waitErr)
		default:
		}
		ready := true
		for i := range probes {
			pr := &probes[i]
			if pr.ok {
				continue
			}
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
			pr.err = pr.probe(pctx)
			pcancel()
			pr.ok = pr.err == nil
			ready = ready && pr.ok
		}
		if ready {
			// Another test binary's Azurite may have taken a port between
			// the choice and our bind, and answered the probes: accept the
			// services only while our process still runs and bound them all.
			select {
			case <-p.done:
				continue // reported at the top of the loop
			default:
			}
			if strings.Contains(p.log.String(), "EADDRINUSE") {
				return errPortTaken
			}
			return nil
		}
		select {
		case <-ctx.Done():
			var msgs []string
			for _, pr := range probes {
				if !pr.ok {
					msgs = append(msgs, fmt.Sprintf("%s service: %v", pr.name, pr.err))
				}
			}
			return fmt.Errorf("not ready after %v (%v): %s", timeout, context.Cause(ctx), strings.Join(msgs, "; "))
		case <-p.done:
		case <-time.After(delay):
		}
		delay = min(delay*2, 200*time.Millisecond)
	}
}

// readyTimeout returns how long to wait for Azurite to answer.
func readyTimeout() (time.Duration, error) {
	v := os.Getenv(EnvTimeout)
	if v == "" {
		return defaultReadyTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q is not a positive duration such as 90s", EnvTimeout, v)
	}
	return d, nil
}

// process is a started Azurite.
type process struct {
	cmd     *exec.Cmd
	pid     int
	log     *tailBuffer
	done    chan struct{} // closed once the process has been waited for
	waitErr error         // set before done is closed
}

// startProcess starts bin in a process group of its own, with its output
// kept in a tail buffer. On Linux the process is also killed if the test
// binary dies without calling Close (a panic, a -timeout): the start happens
// on a locked OS thread that lives until the process has exited, and the
// process gets SIGKILL when that thread ends.
func startProcess(bin string, args []string) (*process, error) {
	cmd := exec.Command(bin, args...)
	p := &process{cmd: cmd, log: newTailBuffer(64 << 10), done: make(chan struct{})}
	cmd.Stdout = p.log
	cmd.Stderr = p.log
	cmd.WaitDelay = 2 * time.Second // a grandchild holding the output pipe must not hang Wait
	setProcessGroup(cmd)
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	p.pid = cmd.Process.Pid
	return p, nil
}

// stop kills the process group and waits until the process has been reaped
// and no process of the group is left.
func (p *process) stop() error {
	select {
	case <-p.done:
	default:
		if err := killGroup(p.cmd); err != nil {
			return fmt.Errorf("killing Azurite (pid %d): %w", p.pid, err)
		}
	}
	deadline := time.After(stopTimeout)
	select {
	case <-p.done:
	case <-deadline:
		return fmt.Errorf("the Azurite process (pid %d) is still running %v after it was killed", p.pid, stopTimeout)
	}
	for groupAlive(p.pid) {
		select {
		case <-deadline:
			return fmt.Errorf("processes of Azurite's group %d still running %v after it was killed", p.pid, stopTimeout)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// tail returns the last n lines of output, indented, for an error message.
func (t *tailBuffer) tail(n int) string {
	s := strings.TrimRight(t.String(), "\n")
	if s == "" {
		return "Azurite printed nothing"
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "Azurite output (last lines):\n\t" + strings.Join(lines, "\n\t")
}

// Find returns the azurite executable Start runs: $TABLEKIT_AZURITE, then
// this module's integration/node_modules/.bin/azurite, then azurite on PATH,
// then the copy Install puts into the user's cache directory, installing it
// first when it is not there yet (progress as for Install).
func Find(ctx context.Context, progress io.Writer) (string, error) {
	if bin := os.Getenv(EnvAzurite); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("azurite: %s=%s: %w", EnvAzurite, bin, err)
		}
		return bin, nil
	}
	if bin := repoBin(); bin != "" {
		return bin, nil
	}
	if bin, err := exec.LookPath("azurite"); err == nil {
		return bin, nil
	}
	return Install(ctx, progress)
}

// repoBin returns integration/node_modules/.bin/azurite of the tablekit
// source tree this package was compiled from, where `make azurite` installs
// it, or "" when it is not there.
func repoBin() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	bin := filepath.Join(filepath.Dir(filepath.Dir(file)), "node_modules", ".bin", binName)
	if _, err := os.Stat(bin); err != nil {
		return ""
	}
	return bin
}
