package fakegcs

import (
	"io"
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The per-connection rate cap ([Options].CapRate) models a real link to
// GCS, where one TCP connection moves data at a limited rate and a client
// goes faster only by opening more connections, as parallel composite
// uploads and sliced downloads do. It is applied to each accepted
// connection, not to each request, because:
//
//   - a connection is what is limited: requests kept alive on one
//     connection share its rate, and N connections get N times it;
//   - every byte on the wire counts, headers and JSON included, for every
//     operation, in both directions, each with a token bucket of its own as
//     on a full-duplex link;
//   - it composes with faults: at most one fault fires per request, so a
//     cap built as a throttle fault would vanish whenever another fault
//     fired. KindThrottle stays what it is, a fault on chosen requests.
//
// Under TLS the cap sits below the TLS layer, on wire bytes. It also applies
// to [Server.InMemoryClient]'s pipes, so tests can use it without sockets.

// capClock is the cap's time: now, and a sleep that ends early, reporting
// false, when either stop channel closes. nil stop channels never close.
type capClock interface {
	now() time.Time
	sleep(d time.Duration, stop1, stop2 <-chan struct{}) bool
}

type realClock struct{}

func (realClock) now() time.Time { return time.Now() }

func (realClock) sleep(d time.Duration, stop1, stop2 <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop1:
	case <-stop2:
	}
	return false
}

// capBurst is the token bucket's depth for a rate in bytes per second: a
// twentieth of a second's bytes, so the pace is smooth, at most 256 KiB,
// so an idle connection cannot burst far ahead of its rate. It is also the
// most bytes one Read or Write moves at once.
func capBurst(bytesPerSecond int64) int {
	return int(min(max(bytesPerSecond/20, 1), quantum))
}

// capListener wraps every accepted connection in a capConn.
type capListener struct {
	net.Listener
	rate     int64           // bytes per second, each direction; 0: no per-connection cap
	newClock func() capClock // a clock per connection
	link     *link           // the total shared by every connection
	done     <-chan struct{} // the server's: closed by Close
}

func (l *capListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &capConn{Conn: c, closed: make(chan struct{}), link: l.link}
	if l.rate > 0 {
		clock := l.newClock()
		cc.rd = newPacer(l.rate, clock, cc.closed, l.done)
		cc.wr = newPacer(l.rate, clock, cc.closed, l.done)
	}
	return cc, nil
}

// pacer is one direction of a capped connection, or of the link: a token
// bucket of bytes.
type pacer struct {
	lim          *rate.Limiter
	burst        int
	clock        capClock
	stop1, stop2 <-chan struct{}
}

func newPacer(bytesPerSecond int64, clock capClock, stop1, stop2 <-chan struct{}) *pacer {
	b := capBurst(bytesPerSecond)
	return &pacer{lim: rate.NewLimiter(rate.Limit(bytesPerSecond), b), burst: b, clock: clock, stop1: stop1, stop2: stop2}
}

// take spends n <= burst tokens, waiting until the bucket holds them; false
// when the connection or the server closed meanwhile.
func (p *pacer) take(n int) bool { return p.takeFor(n, p.stop1) }

// takeFor is take for a pacer shared by connections: the wait ends early
// when stop (the connection's) or the server closes.
func (p *pacer) takeFor(n int, stop <-chan struct{}) bool {
	now := p.clock.now()
	return p.clock.sleep(p.lim.ReserveN(now, n).DelayFrom(now), stop, p.stop2)
}

// link is the total rate shared by every connection ([Limits].LinkRate):
// one token bucket each way that every connection pays beside its own.
// Connections take at most a burst at a time, in turn, so they share it.
type link struct {
	mu     sync.Mutex
	rd, wr *pacer // nil: no total
}

// set replaces the link's rate (0: none).
func (l *link) set(bytesPerSecond int64, clock capClock, done <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rd, l.wr = nil, nil
	if bytesPerSecond > 0 {
		l.rd = newPacer(bytesPerSecond, clock, nil, done)
		l.wr = newPacer(bytesPerSecond, clock, nil, done)
	}
}

func (l *link) pacers() (rd, wr *pacer) {
	if l == nil {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rd, l.wr
}

// chunk is the most bytes one step may move under both pacers (either may
// be nil): n bounded by their bursts.
func chunk(n int, a, b *pacer) int {
	for _, p := range []*pacer{a, b} {
		if p != nil {
			n = min(n, p.burst)
		}
	}
	return n
}

// capConn is an accepted connection held to its listener's rate and to the
// link's. Reads pay for the bytes they got (so the client's bytes wait in
// its socket until the rate allows more); writes pay before they send.
type capConn struct {
	net.Conn
	rd, wr    *pacer // nil: no per-connection cap
	link      *link
	closed    chan struct{} // closed by Close: ends a wait
	closeOnce sync.Once
}

// NetConn returns the capped connection, for what needs the socket itself
// (SO_LINGER for a reset, the receive buffer for a throttle).
func (c *capConn) NetConn() net.Conn { return c.Conn }

func (c *capConn) Read(p []byte) (int, error) {
	lrd, _ := c.link.pacers()
	if c.rd == nil && lrd == nil {
		return c.Conn.Read(p)
	}
	n, err := c.Conn.Read(p[:chunk(len(p), c.rd, lrd)])
	if n > 0 { // a close meanwhile fails the next Read
		if c.rd != nil {
			c.rd.take(n)
		}
		if lrd != nil {
			lrd.takeFor(n, c.closed)
		}
	}
	return n, err
}

func (c *capConn) Write(p []byte) (int, error) {
	_, lwr := c.link.pacers()
	if c.wr == nil && lwr == nil {
		return c.Conn.Write(p)
	}
	written := 0
	for len(p) > 0 {
		k := chunk(len(p), c.wr, lwr)
		if (c.wr != nil && !c.wr.take(k)) || (lwr != nil && !lwr.takeFor(k, c.closed)) {
			return written, net.ErrClosed
		}
		n, err := c.Conn.Write(p[:k])
		written += n
		if err != nil {
			return written, err
		}
		p = p[k:]
	}
	return written, nil
}

// ReadFrom keeps the socket's own ReadFrom (sendfile, for a download from
// the dir backend over plain HTTP) when nothing paces the connection, as
// when it is not wrapped at all; otherwise the bytes go through Write and
// pay. A link rate set during such a copy applies from the next one.
func (c *capConn) ReadFrom(r io.Reader) (int64, error) {
	_, lwr := c.link.pacers()
	if rf, ok := c.Conn.(io.ReaderFrom); ok && c.wr == nil && lwr == nil {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c}, r)
}

// writerOnly hides a writer's ReadFrom from io.Copy.
type writerOnly struct{ io.Writer }

func (c *capConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// rawConn unwraps c (a TLS connection, a capConn) down to the connection
// that owns the socket or pipe, or to the rttConn in front of it, whose
// close (a reset after SetLinger(0)) travels behind the bytes in flight.
func rawConn(c net.Conn) net.Conn {
	for {
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return c
		}
		c = w.NetConn()
	}
}
