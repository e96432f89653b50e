package fakegcs

import (
	"net"
	"sync"
	"time"
)

// The round-trip time ([Options].RTT) models the distance to GCS. Only the
// server's writes are delayed, by the whole RTT: what the client sends
// arrives at once, and the answer comes back RTT later, so every exchange
// in which one side waits for the other pays exactly one RTT: a request and
// its response, a TLS handshake, an HTTP/2 WINDOW_UPDATE without which the
// client may not send more of an upload, and a client's WINDOW_UPDATE
// (which arrives at once) followed by the data it lets the server send.
//
// The delay is a pipeline with timestamps, not a sleep per write: Write
// queues a copy of its bytes, stamped with when they are due, and returns;
// one courier goroutine per connection delivers them in order when due,
// coalescing what is due into one write. Throughput is what the writer
// (and CapRate below it) allows; only latency grows. Like a TCP send window,
// the pipeline holds at most rttMaxQueued bytes; a writer beyond that waits
// for the oldest to be delivered.

// rttMaxQueued bounds the bytes in flight on one connection: 8 MiB, about
// what Linux's default TCP buffers let a connection keep unacknowledged.
const rttMaxQueued = 8 << 20

// rttListener wraps every accepted connection in an rttConn.
type rttListener struct {
	net.Listener
	rtt  time.Duration
	done <-chan struct{} // the server's: closed by Close
}

func (l *rttListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newRTTConn(c, l.rtt, l.done), nil
}

// rttConn is a connection whose writes reach the peer rtt after they were
// made. Close, too, travels the pipeline: the peer reads everything written
// before it, then the end (a reset after SetLinger(0), as on TCP where the
// bytes already on the wire still arrive before the RST).
type rttConn struct {
	net.Conn
	rtt  time.Duration
	done <-chan struct{} // the server's: its close drops what is in flight

	mu      sync.Mutex
	segs    []rttSegment
	queued  int  // bytes in segs
	closed  bool // Close was called: its segment is in the pipeline
	linger0 bool // the close is a reset
	err     error
	more    chan struct{} // cap 1: a segment was queued (wakes the courier)
	space   chan struct{} // cap 1: bytes were delivered, or the pipeline ended (wakes a writer)
}

// rttSegment is one write, or the close, and when the peer gets it.
type rttSegment struct {
	due   time.Time
	b     []byte
	close bool
}

func newRTTConn(c net.Conn, rtt time.Duration, done <-chan struct{}) *rttConn {
	rc := &rttConn{Conn: c, rtt: rtt, done: done, more: make(chan struct{}, 1), space: make(chan struct{}, 1)}
	go rc.courier()
	return rc
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Write queues a copy of p, due rtt from now, and returns without waiting
// for it, unless the pipeline is full.
func (c *rttConn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.err == nil && !c.closed && c.queued > 0 && c.queued+len(p) > rttMaxQueued {
		c.mu.Unlock()
		select {
		case <-c.space:
		case <-c.done:
		}
		c.mu.Lock()
		select {
		case <-c.done:
			return 0, net.ErrClosed
		default:
		}
	}
	switch {
	case c.err != nil:
		return 0, c.err
	case c.closed:
		return 0, net.ErrClosed
	}
	due := time.Now().Add(c.rtt)
	for rest := p; len(rest) > 0; {
		b := getSegBuf()
		k := copy(b[:cap(b)], rest)
		c.segs = append(c.segs, rttSegment{due: due, b: b[:k]})
		rest = rest[k:]
	}
	c.queued += len(p)
	signal(c.more)
	return len(p), nil
}

// segBufSize is the size of the pooled buffers a write is copied into: a
// TLS record (16 KiB and its overhead) fits in one. Reusing them, rather
// than cloning every write, keeps the model from costing the server a
// fresh allocation (and its page faults) per record, which on a small
// machine made the fake, not the client, the bottleneck of the wire
// benchmarks.
const segBufSize = 32 << 10

var segBufs = sync.Pool{New: func() any { return new([segBufSize]byte) }}

func getSegBuf() []byte { return segBufs.Get().(*[segBufSize]byte)[:0] }

// putSegBufs returns delivered segments' buffers to the pool.
func putSegBufs(bufs [][]byte) {
	for _, b := range bufs {
		segBufs.Put((*[segBufSize]byte)(b[:segBufSize]))
	}
}

// Close puts the end of the connection in the pipeline and returns; writes
// fail from now on.
func (c *rttConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.err != nil {
		return nil
	}
	c.closed = true
	c.segs = append(c.segs, rttSegment{due: time.Now().Add(c.rtt), close: true})
	signal(c.more)
	signal(c.space)
	return nil
}

// SetLinger(0) makes the close, when it arrives, a reset (see setLinger0).
func (c *rttConn) SetLinger(sec int) error {
	c.mu.Lock()
	c.linger0 = sec == 0
	c.mu.Unlock()
	return nil
}

// SetReadBuffer sets the socket's receive buffer (reads are not delayed).
func (c *rttConn) SetReadBuffer(n int) error {
	if rb, ok := c.Conn.(interface{ SetReadBuffer(int) error }); ok {
		return rb.SetReadBuffer(n)
	}
	return nil
}

// resetDrain bounds how long a reset waits for the bytes before it to be
// acknowledged (see awaitAcked): long enough for a loopback retransmission
// (the minimum RTO is 200 ms), short of a client's stall timeout.
const resetDrain = time.Second

// courier delivers the segments in order, each when it is due, until the
// close is delivered, a write fails or the server closes.
func (c *rttConn) courier() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var taken [][]byte
	for {
		due, ok := c.next()
		if !ok || !c.waitUntil(timer, due) {
			c.stop(net.ErrClosed)
			return
		}
		bufs, end := c.takeDue(time.Now())
		if len(bufs) > 0 {
			taken = append(taken[:0], bufs...) // WriteTo consumes bufs; these go back to the pool
			_, err := bufs.WriteTo(c.Conn)
			putSegBufs(taken)
			if err != nil {
				c.stop(err)
				return
			}
		}
		if end {
			c.mu.Lock()
			reset := c.linger0
			c.mu.Unlock()
			if reset {
				awaitAcked(c.Conn, resetDrain)
				setLinger0(c.Conn)
			}
			c.stop(net.ErrClosed)
			return
		}
		signal(c.space)
	}
}

// next waits for a segment and returns when it is due; false when the
// server closed first.
func (c *rttConn) next() (time.Time, bool) {
	for {
		c.mu.Lock()
		if len(c.segs) > 0 {
			due := c.segs[0].due
			c.mu.Unlock()
			return due, true
		}
		c.mu.Unlock()
		select {
		case <-c.more:
		case <-c.done:
			return time.Time{}, false
		}
	}
}

func (c *rttConn) waitUntil(timer *time.Timer, due time.Time) bool {
	d := time.Until(due)
	if d <= 0 {
		return true
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return true
	case <-c.done:
		return false
	}
}

// takeDue removes the segments due by now, in order; end reports that the
// close was among them (it is always last).
func (c *rttConn) takeDue(now time.Time) (bufs net.Buffers, end bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := 0
	for ; i < len(c.segs) && !c.segs[i].due.After(now); i++ {
		if c.segs[i].close {
			end = true
			i++
			break
		}
		bufs = append(bufs, c.segs[i].b)
		c.queued -= len(c.segs[i].b)
	}
	clear(c.segs[:i]) // the bytes are the caller's now
	c.segs = c.segs[i:]
	return bufs, end
}

// stop ends the pipeline: what is still in it is dropped, the connection
// closes and writers fail with err.
func (c *rttConn) stop(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.segs, c.queued = nil, 0
	c.mu.Unlock()
	c.Conn.Close()
	signal(c.space)
}
