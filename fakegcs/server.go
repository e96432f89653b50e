package fakegcs

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a fake GCS JSON API server. Its methods are safe for concurrent
// use.
type Server struct {
	opts    Options
	tb      TB // set by NewTest
	be      backend
	tmpDir  string // removed by Close when the server made it
	ln      net.Listener
	hs      *http.Server
	url     string
	certPEM []byte
	tlsConf *tls.Config

	client     *http.Client
	clientOnce sync.Once
	pipeClient *http.Client // InMemoryClient's
	pipes      *pipeListener
	pipeOnce   sync.Once

	capClock func() capClock // per capped connection; nil means real time
	linkClk  capClock        // the link's (Limits.LinkRate); nil means real time

	lim  limiter // the request-rate Limits and their state
	link link    // the total rate shared by every connection

	token atomic.Pointer[string] // the bearer token accepted: Options.Token, then SetToken's

	emptyPages atomic.Int64 // KindEmptyPage's answers, to make each token new
	// listExamined counts the names object listings looked at, so tests
	// can see that a page costs in proportion to the page.
	listExamined atomic.Int64

	done      chan struct{} // closed by Close: wakes stalls, throttles and capped connections
	closeOnce sync.Once
	handlers  sync.WaitGroup

	mu       sync.Mutex // guards buckets, sessions, rewrites, lastGen, closed
	closed   bool
	buckets  map[string]*bucket
	hmacKeys map[string]*hmacKey // by access ID
	sessions map[string]*session
	rewrites map[string]*rewriteOp // by rewrite token
	order    []*session            // sessions in creation order, for Stats
	lastGen  int64
	ops      map[string]*renameOp // renameFolder operations by ID (folders.go)
	lastOp   int64

	fmu         sync.Mutex // guards faults, rng, lastFaultID, retryTests
	faults      []*Injection
	rng         *rand.Rand
	lastFaultID int
	retryTests  map[string]*retryTest
	lastRetryID int

	cmu      sync.Mutex // guards counters, the request log, epoch and every connInfo.counted
	counters counters
	epoch    uint64 // ResetStats calls, so that open connections count again
}

// New starts a server on opts.Addr (a random loopback port by default).
// Close stops it.
func New(opts Options) (*Server, error) { return newServer(opts, nil) }

// newServer is New with the clock of capped connections (nil: real time).
func newServer(opts Options, capClock func() capClock) (*Server, error) {
	if opts.CapRate < 0 {
		return nil, fmt.Errorf("fakegcs: negative CapRate %d", opts.CapRate)
	}
	if opts.RewriteBytesPerCall < 0 || opts.RewriteBytesPerCall%rewriteUnit != 0 {
		return nil, fmt.Errorf("fakegcs: RewriteBytesPerCall %d is not a multiple of 1 MiB", opts.RewriteBytesPerCall)
	}
	if opts.RTT < 0 {
		return nil, fmt.Errorf("fakegcs: negative RTT %v", opts.RTT)
	}
	if err := opts.Limits.Validate(); err != nil {
		return nil, err
	}
	s := &Server{
		capClock:   capClock,
		opts:       opts,
		done:       make(chan struct{}),
		buckets:    map[string]*bucket{},
		ops:        map[string]*renameOp{},
		hmacKeys:   map[string]*hmacKey{},
		sessions:   map[string]*session{},
		rewrites:   map[string]*rewriteOp{},
		rng:        rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		retryTests: map[string]*retryTest{},
		counters:   newCounters(),
	}
	s.token.Store(&opts.Token)
	_ = s.SetLimits(opts.Limits) // validated above
	if err := s.setup(); err != nil {
		s.cleanupStorage()
		return nil, err
	}
	return s, nil
}

func (s *Server) setup() error {
	dir := s.opts.Dir
	if s.opts.Backend == BackendDir && dir == "" {
		d, err := os.MkdirTemp("", "fakegcs-")
		if err != nil {
			return fmt.Errorf("fakegcs: %w", err)
		}
		s.tmpDir, dir = d, d
	}
	be, err := newBackend(s.opts.Backend, dir)
	if err != nil {
		return err
	}
	s.be = be
	for _, b := range s.opts.RequesterPays {
		if err := s.CreateBucket(b); err != nil {
			return err
		}
		_ = s.SetRequesterPays(b, true)
	}
	for _, b := range s.opts.Buckets {
		if err := s.CreateBucket(b); err != nil {
			return err
		}
		if s.opts.DefaultSoftDelete != 0 {
			if err := s.SetSoftDelete(b, s.opts.DefaultSoftDelete); err != nil {
				return err
			}
		}
	}
	for _, f := range s.opts.Faults {
		if _, err := s.TryInject(f); err != nil {
			return err
		}
	}
	return s.listen()
}

func (s *Server) listen() error {
	addr := s.opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("fakegcs: %w", err)
	}
	ln = s.wire(ln)
	s.hs = s.newHTTPServer()
	scheme := "http"
	if s.opts.TLS {
		conf, pem, err := selfSignedTLS(s.alpn())
		if err != nil {
			ln.Close()
			return err
		}
		s.tlsConf, s.certPEM = conf, pem
		ln = tls.NewListener(ln, conf)
		scheme = "https"
	}
	s.ln = ln
	s.url = scheme + "://" + hostPort(ln.Addr())
	go s.hs.Serve(ln)
	return nil
}

// capped holds the connections ln accepts to [Options].CapRate, if set,
// and to the link's total rate, [Limits].LinkRate, whenever it is set
// (see wire).
func (s *Server) capped(ln net.Listener) net.Listener {
	clock := s.capClock
	if clock == nil {
		clock = func() capClock { return realClock{} }
	}
	return &capListener{Listener: ln, rate: s.opts.CapRate, newClock: clock, link: &s.link, done: s.done}
}

// linkClock is the link's clock.
func (s *Server) linkClock() capClock {
	if s.linkClk != nil {
		return s.linkClk
	}
	return realClock{}
}

// hostPort formats a listener address so that clients can dial it: an
// unspecified IP becomes the loopback address.
func hostPort(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := ta.IP
	if ip == nil || ip.IsUnspecified() {
		if ip.To4() == nil && ip != nil {
			ip = net.IPv6loopback
		} else {
			ip = net.IPv4(127, 0, 0, 1)
		}
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(ta.Port))
}

// TB is the part of testing.TB that [NewTest] uses; *testing.T and *testing.B
// satisfy it. It is declared here so that a program that links fakegcs (gcsput
// demo) does not link package testing.
type TB interface {
	Helper()
	TempDir() string
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Cleanup(func())
}

// NewTest starts a server for a test or benchmark. It fails tb at once if
// the server cannot start, and at cleanup closes the server and reports
// every non-optional fault that never fired. BackendDir without a Dir uses
// tb.TempDir(); a nil Logf logs fired faults with tb.Logf.
func NewTest(tb TB, opts Options) *Server {
	tb.Helper()
	if opts.Backend == BackendDir && opts.Dir == "" {
		opts.Dir = tb.TempDir()
	}
	if opts.Logf == nil {
		opts.Logf = tb.Logf
	}
	s, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	s.tb = tb
	tb.Cleanup(func() {
		s.Close()
		for _, in := range s.Faults() {
			if in.mustFire() && in.Fired() == 0 {
				tb.Errorf("fakegcs: fault #%d (%v) never fired", in.id, in.fault)
			}
		}
	})
	return s
}

// URL is the server's base URL, e.g. "http://127.0.0.1:40123", without a
// trailing slash.
func (s *Server) URL() string { return s.url }

// Endpoint is the JSON API endpoint for the official client's
// option.WithEndpoint: URL() + "/storage/v1/". gcsput's upload.Options
// wants URL() (it takes this form too, as the same server).
func (s *Server) Endpoint() string { return s.url + "/storage/v1/" }

// Host is the "host:port" the server listens on, as STORAGE_EMULATOR_HOST
// wants it (plain HTTP only).
func (s *Server) Host() string { return hostPort(s.ln.Addr()) }

// SetToken changes the bearer token the server accepts (see Options.Token)
// from the next request on, as a revoked or rotated credential does on GCS:
// a client holding the old token is answered 401 until it fetches the new
// one. "" stops requiring a token.
func (s *Server) SetToken(tok string) { s.token.Store(&tok) }

// CertPEM returns the PEM certificate of a TLS server (nil without TLS), for
// clients that must be told to trust it.
func (s *Server) CertPEM() []byte { return s.certPEM }

// Client returns the server's HTTP client (the same one on every call):
// a clone of http.DefaultTransport that keeps enough idle connections for
// parallel use. With TLS it trusts the server's certificate and, like the
// default transport, takes HTTP/2 when the server offers it. Close closes
// its idle connections.
func (s *Server) Client() *http.Client {
	s.clientOnce.Do(func() {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		if s.tlsConf != nil {
			tr.TLSClientConfig = clientTLS(s.certPEM)
			tr.ForceAttemptHTTP2 = true // a custom TLSClientConfig turns it off otherwise
		}
		s.client = &http.Client{Transport: tr}
	})
	return s.client
}

// Close stops the server: it closes the listener and every connection, ends
// running stalls, waits for handlers to return and then releases the
// backend (a temporary directory is removed). Close is idempotent.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.done)
		if s.hs != nil {
			err = s.hs.Close()
		}
		s.handlers.Wait()
		for _, c := range []*http.Client{s.client, s.pipeClient} {
			if c != nil {
				c.CloseIdleConnections()
			}
		}
		s.cleanupStorage()
	})
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (s *Server) cleanupStorage() {
	if s.be != nil {
		s.be.close()
	}
	if s.tmpDir != "" {
		os.RemoveAll(s.tmpDir)
	}
}

func (s *Server) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// sleep waits d, or less when the server closes or ctx ends; it reports
// whether the whole wait happened.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	return realClock{}.sleep(d, s.done, ctx.Done())
}
