package fakegcs

import (
	"context"
	"net"
	"net/http"
	"time"
)

// The wire between a client and the handler, from the socket up: the
// round-trip time ([Options].RTT), the per-connection rate cap
// ([Options].CapRate), the count of accepted connections, then TLS with
// ALPN ("h2" and "http/1.1", as GCS offers) and net/http's own HTTP/1.1
// and HTTP/2 servers. The cap sits above the RTT: bytes leave at the
// capped rate, then travel.

// gcsMaxStreams is the SETTINGS_MAX_CONCURRENT_STREAMS storage.googleapis.com
// advertises: a client that wants more streams at once must open another
// connection or wait.
const gcsMaxStreams = 100

// wire wraps a listener's connections in the RTT, the cap and the counter.
func (s *Server) wire(ln net.Listener) net.Listener {
	if s.opts.RTT > 0 {
		ln = &rttListener{Listener: ln, rtt: s.opts.RTT, done: s.done}
	}
	return &countListener{Listener: s.capped(ln), s: s}
}

// alpn is what the server offers by ALPN under TLS, in order of preference.
func (s *Server) alpn() []string {
	if s.opts.HTTP1Only {
		return []string{"http/1.1"}
	}
	return []string{"h2", "http/1.1"}
}

// protocols are the HTTP versions net/http serves: HTTP/2 only over TLS,
// where ALPN offers it (GCS has no cleartext HTTP/2).
func (s *Server) protocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(s.opts.TLS && !s.opts.HTTP1Only)
	return p
}

// newHTTPServer is the net/http server behind the listener and the pipes.
func (s *Server) newHTTPServer() *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		Protocols:         s.protocols(),
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: gcsMaxStreams},
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, &connInfo{conn: c})
		},
	}
}

// connKey finds a request's connInfo in its context.
type connKey struct{}

// connInfo is what the handler knows of a request's connection: the
// connection itself (to drop it, or to size its socket buffer), and the
// stats epoch in which its protocol was last counted.
type connInfo struct {
	conn    net.Conn // as accepted: TLS over the cap over the RTT over the socket
	counted uint64   // Server.epoch+1 when counted in that epoch; guarded by Server.cmu
}

// connOf is a request's connection, or nil when the Server is mounted in
// another http.Server.
func connOf(r *http.Request) *connInfo {
	ci, _ := r.Context().Value(connKey{}).(*connInfo)
	return ci
}

// countListener counts the connections it accepts in the stats.
type countListener struct {
	net.Listener
	s *Server
}

func (l *countListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.s.cmu.Lock()
		l.s.counters.conns++
		l.s.cmu.Unlock()
	}
	return c, err
}
