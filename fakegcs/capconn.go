package fakegcs

import (
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
	rate     int64           // bytes per second, each direction
	newClock func() capClock // a clock per connection
	done     <-chan struct{} // the server's: closed by Close
}

func (l *capListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	clock := l.newClock()
	cc := &capConn{Conn: c, closed: make(chan struct{})}
	cc.rd = newPacer(l.rate, clock, cc.closed, l.done)
	cc.wr = newPacer(l.rate, clock, cc.closed, l.done)
	return cc, nil
}

// pacer is one direction of a capped connection: a token bucket of bytes.
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
func (p *pacer) take(n int) bool {
	now := p.clock.now()
	return p.clock.sleep(p.lim.ReserveN(now, n).DelayFrom(now), p.stop1, p.stop2)
}

// capConn is an accepted connection held to its listener's rate. Reads pay
// for the bytes they got (so the client's bytes wait in its socket until
// the rate allows more); writes pay before they send.
type capConn struct {
	net.Conn
	rd, wr    *pacer
	closed    chan struct{} // closed by Close: ends a wait
	closeOnce sync.Once
}

// NetConn returns the capped connection, for what needs the socket itself
// (SO_LINGER for a reset, the receive buffer for a throttle).
func (c *capConn) NetConn() net.Conn { return c.Conn }

func (c *capConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p[:min(len(p), c.rd.burst)])
	if n > 0 {
		c.rd.take(n) // a close meanwhile fails the next Read
	}
	return n, err
}

func (c *capConn) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		k := min(len(p), c.wr.burst)
		if !c.wr.take(k) {
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
