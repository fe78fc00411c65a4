package faults

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
)

// Proxy forwards TCP connections from a loopback port to a loopback target
// and resets a share of them in the middle of a reply: the request has been
// forwarded whole and answered, the client gets part of the answer and then
// a connection reset.
type Proxy struct {
	ln     net.Listener
	target string

	resetPermille atomic.Int64
	resets        atomic.Int64
	conns         atomic.Int64

	mu     sync.Mutex
	rng    *rand.Rand
	open   map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// NewProxy listens on 127.0.0.1 at a free port and forwards to target, a
// host:port on the loopback interface. It resets no connection until
// SetResetRate is called.
func NewProxy(target string, seed uint64) (*Proxy, error) {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return nil, fmt.Errorf("faults: proxy target %q: %w", target, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("faults: proxy target %q is not a loopback address", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, rng: rand.New(rand.NewPCG(seed, seed+1)), open: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Rewrite returns endpoint (a URL such as Azurite's
// http://127.0.0.1:10002/devstoreaccount1/) with its host and port replaced
// by the proxy's.
func (p *Proxy) Rewrite(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", err
	}
	u.Host = p.Addr()
	return u.String(), nil
}

// SetResetRate sets the share (0 to 1) of server-to-client chunks after
// which the connection is reset instead of forwarded whole.
func (p *Proxy) SetResetRate(rate float64) { p.resetPermille.Store(int64(rate * 1000)) }

// Resets is the number of connections reset so far; Conns the number accepted.
func (p *Proxy) Resets() int64 { return p.resets.Load() }

// Conns is the number of connections accepted so far.
func (p *Proxy) Conns() int64 { return p.conns.Load() }

// Close stops listening, closes every connection and waits for the
// forwarding goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.open {
		_ = c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.open[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.open, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.conns.Add(1)
		p.wg.Add(1)
		go p.serve(client)
	}
}

func (p *Proxy) roll() bool {
	rate := p.resetPermille.Load()
	if rate <= 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rng.Int64N(1000) < rate
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	if !p.track(client) || !p.track(server) {
		_ = server.Close()
		return
	}
	defer p.untrack(client)
	defer p.untrack(server)

	done := make(chan struct{})
	go func() { // client → server, whole
		_, _ = io.Copy(server, client)
		if tc, ok := server.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		close(done)
	}()
	buf := make([]byte, 32<<10)
	for {
		n, rerr := server.Read(buf)
		if n > 0 {
			if p.roll() {
				// Forward part of the reply, then reset: the client has seen
				// the request answered but cannot read the answer.
				_, _ = client.Write(buf[:n/2])
				if tc, ok := client.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				p.resets.Add(1)
				_ = client.Close()
				_ = server.Close()
				<-done
				return
			}
			if _, werr := client.Write(buf[:n]); werr != nil {
				break
			}
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				break
			}
			if tc, ok := client.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			break
		}
	}
	_ = client.Close()
	_ = server.Close()
	<-done
}
