package auth

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Protocol names the HTTP version a transport speaks to an https endpoint.
// Plain-http endpoints (emulators) always get HTTP/1.1.
//
// The choice decides how parallel streams share TCP connections, and on the
// wire GCS offers (TLS, HTTP/2 by ALPN, tens of milliseconds away, a
// limited rate per TCP connection) that decides throughput: over HTTP/2 net/http
// multiplexes every stream of a process onto one connection until the
// server's MAX_CONCURRENT_STREAMS (100 at GCS) is reached, so eight slices
// of a download share one connection's window and rate. gcsfuse
// (--client-protocol http1) and the Rust object_store crate chose HTTP/1.1
// for GCS data after measuring the same; gcsput's own figures are in the
// docs/performance.md ("The wire").
type Protocol string

const (
	// HTTP1 gives every request in flight a TCP connection of its own, kept
	// alive and reused by the next request (the transport keeps
	// 2 × parallelism idle), so a burst of small requests pays no handshake
	// per request. The default.
	HTTP1 Protocol = "http1"

	// HTTP2 takes HTTP/2 when the server offers it: with
	// StreamsPerConn 0, one connection for everything (net/http's default);
	// with StreamsPerConn n, a pool that opens another connection whenever
	// every open one carries n requests in flight.
	HTTP2 Protocol = "http2"
)

// DefaultProtocol is the protocol of a transport when none is named.
const DefaultProtocol = HTTP1

// ParseProtocol reads a protocol's name ("" is DefaultProtocol).
func ParseProtocol(s string) (Protocol, error) {
	switch p := Protocol(s); p {
	case "":
		return DefaultProtocol, nil
	case HTTP1, HTTP2:
		return p, nil
	}
	return "", fmt.Errorf("unknown HTTP protocol %q: use http1 or http2", s)
}

// ForProtocol returns a round tripper that speaks p over t, a transport from
// [NewTransport] whose TLS configuration the caller may have set. t is
// changed and must not be used otherwise. streamsPerConn applies to HTTP2
// only (see [HTTP2]); a pool holds at most maxConns connections' transports
// (0: no limit beyond what the requests in flight need).
func ForProtocol(t *http.Transport, p Protocol, streamsPerConn, maxConns int) (http.RoundTripper, error) {
	var ps http.Protocols
	ps.SetHTTP1(true)
	switch p {
	case "", HTTP1:
		t.ForceAttemptHTTP2 = false
		t.Protocols = &ps
		offer(t, "http/1.1")
		return t, nil
	case HTTP2:
		ps.SetHTTP2(true)
		t.ForceAttemptHTTP2 = true
		t.Protocols = &ps
		offer(t, "h2", "http/1.1")
		if streamsPerConn <= 0 {
			return t, nil
		}
		// One connection per member: without the limit, requests that reach a
		// member before its connection is up would each dial their own.
		t.MaxConnsPerHost = 1
		return &pool{template: t, streams: streamsPerConn, most: maxConns}, nil
	}
	return nil, fmt.Errorf("unknown HTTP protocol %q: use http1 or http2", p)
}

// offer sets the protocols t's TLS handshakes offer by ALPN. Protocols alone
// does not: a transport cloned from one that has served HTTP/2 (as
// http.DefaultTransport has once anything used it) carries a TLS config
// that offers "h2", and a server that takes it then speaks HTTP/2 to an
// HTTP/1.1 transport, which reads its frames as a malformed response.
func offer(t *http.Transport, protos ...string) {
	c := &tls.Config{}
	if t.TLSClientConfig != nil {
		c = t.TLSClientConfig.Clone()
	}
	c.NextProtos = protos
	t.TLSClientConfig = c
}

// pool spreads requests over HTTP/2 transports, each holding its own
// connection per host: a request goes to the least busy, and a new
// transport (so a new connection) is opened when every one carries
// streams requests already. Requests count as in flight until their
// response body is closed or read to its end.
type pool struct {
	template *http.Transport
	streams  int
	most     int

	mu       sync.Mutex
	members  []*http.Transport
	inflight []int
}

func (p *pool) RoundTrip(req *http.Request) (*http.Response, error) {
	i, t := p.take()
	resp, err := t.RoundTrip(req)
	if err != nil {
		p.done(i)
		return nil, err
	}
	resp.Body = &poolBody{ReadCloser: resp.Body, release: func() { p.done(i) }}
	return resp, nil
}

// take picks the member for the next request and counts it in flight.
func (p *pool) take() (int, *http.Transport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	best := -1
	for i, n := range p.inflight {
		if best < 0 || n < p.inflight[best] {
			best = i
		}
	}
	if best < 0 || p.inflight[best] >= p.streams && (p.most <= 0 || len(p.members) < p.most) {
		p.members = append(p.members, p.template.Clone())
		p.inflight = append(p.inflight, 0)
		best = len(p.members) - 1
	}
	p.inflight[best]++
	return best, p.members[best]
}

func (p *pool) done(i int) {
	p.mu.Lock()
	p.inflight[i]--
	p.mu.Unlock()
}

// CloseIdleConnections closes every member's idle connections.
func (p *pool) CloseIdleConnections() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.members {
		m.CloseIdleConnections()
	}
}

// poolBody releases its request's place once, at EOF or Close.
type poolBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *poolBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(b.release)
	}
	return n, err
}

func (b *poolBody) Close() error {
	b.once.Do(b.release)
	return b.ReadCloser.Close()
}
