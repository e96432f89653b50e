package fakegcs

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
)

// InMemoryClient returns an HTTP client whose requests this server answers
// over in-process pipes (net.Pipe): no socket and no port, but the whole
// HTTP/1.1 exchange, so connection faults (resets, stalls, broken streams)
// behave as they do over TCP. Every host name reaches this server; use
// [Server.URL] as the endpoint. A TLS server is spoken to in plain text here.
// The client is the same for every call, and Close ends its connections.
func (s *Server) InMemoryClient() *http.Client {
	s.pipeOnce.Do(func() {
		s.pipes = &pipeListener{conns: make(chan net.Conn), done: s.done}
		go s.hs.Serve(s.wire(s.pipes))
		dial := func(ctx context.Context, _, _ string) (net.Conn, error) { return s.pipes.dial(ctx) }
		tr := &http.Transport{
			DialContext:         dial,
			DialTLSContext:      dial,
			MaxIdleConnsPerHost: 64,
			DisableCompression:  true,
		}
		s.pipeClient = &http.Client{Transport: tr}
	})
	return s.pipeClient
}

// pipeListener hands the server ends of net.Pipe pairs to http.Server.Serve.
type pipeListener struct {
	conns chan net.Conn
	done  <-chan struct{} // the server's: closed by Close
}

// dial makes a pipe and waits until the server has accepted its far end.
func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	c, s := net.Pipe()
	rst := new(atomic.Bool)
	client, server := pipeEnd{c, rst}, pipeEnd{s, rst}
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close is a no-op: the server's done channel is what ends Accept.
func (l *pipeListener) Close() error   { return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// pipeEnd is one end of a pipe whose errors read as TCP's would: after the
// server resets the connection (setLinger0), or on a write to a closed peer,
// the client sees ECONNRESET, which clients retry, rather than the pipe's own
// io.ErrClosedPipe or a clean EOF.
type pipeEnd struct {
	net.Conn
	rst *atomic.Bool // shared by both ends; set by the server's reset
}

func (c pipeEnd) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	return n, c.tcpError("read", err)
}

func (c pipeEnd) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	return n, c.tcpError("write", err)
}

func (c pipeEnd) tcpError(op string, err error) error {
	if err == nil || !(c.rst.Load() || op == "write" && errors.Is(err, io.ErrClosedPipe)) {
		return err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: pipeAddr{}, Addr: pipeAddr{}, Err: os.NewSyscallError(op, syscall.ECONNRESET)}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "in-memory" }
