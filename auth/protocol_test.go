package auth_test

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gcsput/gcsput/auth"
)

// h2Server is a TLS server that offers h2 and http/1.1, as GCS does, and
// counts the TCP connections it accepted and the protocols it was spoken.
type h2Server struct {
	*httptest.Server
	conns  atomic.Int64
	mu     sync.Mutex
	protos map[string]int
	hold   chan struct{} // closed when enough requests are in flight; nil: none held
	want   int64
	in     atomic.Int64
}

func newH2Server(t *testing.T, hold int) *h2Server {
	s := &h2Server{protos: map[string]int{}, want: int64(hold)}
	if hold > 0 {
		s.hold = make(chan struct{})
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.protos[r.Proto]++
		s.mu.Unlock()
		if s.hold != nil {
			if s.in.Add(1) == s.want {
				close(s.hold)
			}
			select { // every request stays in flight until all have arrived
			case <-s.hold:
			case <-r.Context().Done():
			}
		}
		io.WriteString(w, "ok")
	}))
	s.EnableHTTP2 = true
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes cut short when a test ends
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// client returns an HTTP client speaking p to s, trusting its certificate.
func (s *h2Server) client(t *testing.T, p auth.Protocol, streams int) *http.Client {
	tr := auth.NewTransport(8)
	// As a clone of a transport that has served HTTP/2 has it: a TLS config
	// offering h2. The protocol chosen must win over it.
	tr.TLSClientConfig = &tls.Config{RootCAs: s.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, NextProtos: []string{"h2", "http/1.1"}}
	rt, err := auth.ForProtocol(tr, p, streams, 0)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: rt}
}

func (s *h2Server) get(t *testing.T, hc *http.Client, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			resp, err := hc.Get(s.URL)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
}

// Parallel streams get the connections the protocol promises: one each over
// HTTP/1.1, one for all over plain HTTP/2, one per StreamsPerConn in a pool.
// Seven requests are held in flight at once.
func TestParallelStreamsAndConnections(t *testing.T) {
	for _, tc := range []struct {
		p       auth.Protocol
		streams int
		conns   int64
		proto   string
	}{
		{auth.HTTP1, 0, 7, "HTTP/1.1"},
		{auth.HTTP2, 0, 1, "HTTP/2.0"},
		{auth.HTTP2, 2, 4, "HTTP/2.0"},
	} {
		s := newH2Server(t, 7)
		hc := s.client(t, tc.p, tc.streams)
		// One request first, as a transfer's metadata call goes first: while no
		// connection is open, net/http dials one per request, even for HTTP/2.
		var first sync.WaitGroup
		first.Go(func() { s.get(t, hc, 1) })
		for s.in.Load() == 0 {
			runtime.Gosched()
		}
		s.get(t, hc, 6)
		first.Wait()
		if s.conns.Load() != tc.conns || s.protos[tc.proto] != 7 {
			t.Errorf("%s (%d streams per connection): %d connections, protocols %v; want %d, all %s", tc.p, tc.streams, s.conns.Load(), s.protos, tc.conns, tc.proto)
		}
	}
}

// A burst of small requests reuses kept-alive connections: no TLS handshake
// per request, whatever the protocol.
func TestBurstReusesConnections(t *testing.T) {
	for _, tc := range []struct {
		p       auth.Protocol
		streams int
		most    int64
	}{
		// 8 at a time over HTTP/1.1 need 8 connections; net/http dials another
		// when a request starts just before a finished one has returned its
		// connection, keeps up to MaxIdleConnsPerHost (2 × parallelism, 16)
		// idle and closes the rest, so a loaded machine sees 10 to 20. What
		// must hold: a handshake for every 5 requests at most, never one each.
		{auth.HTTP1, 0, 40}, {auth.HTTP2, 0, 1}, {auth.HTTP2, 4, 2},
	} {
		s := newH2Server(t, 0)
		hc := s.client(t, tc.p, tc.streams)
		s.get(t, hc, 1) // the connection a metadata call opens first
		for range 25 {
			s.get(t, hc, 8) // 200 requests, 8 at a time
		}
		if n := s.conns.Load(); n < 1 || n > tc.most {
			t.Errorf("%s (%d streams per connection): 200 requests opened %d connections, want at most %d", tc.p, tc.streams, n, tc.most)
		}
	}
}

func TestParseProtocol(t *testing.T) {
	for in, want := range map[string]auth.Protocol{"": auth.HTTP1, "http1": auth.HTTP1, "http2": auth.HTTP2} {
		if got, err := auth.ParseProtocol(in); got != want || err != nil {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	if _, err := auth.ParseProtocol("h3"); err == nil || err.Error() != `unknown HTTP protocol "h3": use http1 or http2` {
		t.Errorf("h3: %v", err)
	}
}
