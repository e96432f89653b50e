package fakegcs

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// countConn is a connection that takes every byte written and reads an
// endless stream, counting both.
type countConn struct {
	net.Conn
	wrote, read int
}

func (c *countConn) Write(p []byte) (int, error) { c.wrote += len(p); return len(p), nil }
func (c *countConn) Read(p []byte) (int, error)  { c.read += len(p); return len(p), nil }
func (c *countConn) Close() error                { return nil }

// Connections share the link's total (Limits.LinkRate): at 1,000,000 B/s,
// two connections moving 200,000 bytes each, in turns of 50,000, wait
// (400,000 - 50,000) µs on the link's clock together, as one connection
// moving 400,000 would: each got half the link. Per-connection caps alone
// (CapRate) would let each wait only for its own 200,000. Reads and writes
// have a bucket each.
func TestLinkRateShared(t *testing.T) {
	for _, dir := range []string{"write", "read"} {
		t.Run(dir, func(t *testing.T) {
			clock := &virtualClock{t: time.Unix(0, 0)}
			var l link
			l.set(1_000_000, clock, nil)
			conns := []*countConn{{}, {}}
			capped := []*capConn{}
			for _, c := range conns {
				capped = append(capped, &capConn{Conn: c, closed: make(chan struct{}), link: &l})
			}
			buf := make([]byte, 50_000)
			for range 4 {
				for _, c := range capped {
					var n int
					if dir == "write" {
						n, _ = c.Write(buf)
					} else {
						n, _ = c.Read(buf)
					}
					if n != len(buf) {
						t.Fatalf("moved %d of %d", n, len(buf))
					}
				}
			}
			moved := func(c *countConn) int { return c.wrote + c.read }
			if moved(conns[0]) != 200_000 || moved(conns[1]) != 200_000 || clock.total() != 350*time.Millisecond {
				t.Fatalf("moved %d and %d bytes in %v of the link's time; want 200000 each in 350ms",
					moved(conns[0]), moved(conns[1]), clock.total())
			}
			l.set(0, clock, nil) // no total: nothing waits
			if n, _ := capped[0].Write(make([]byte, 1<<20)); n != 1<<20 || clock.total() != 350*time.Millisecond {
				t.Errorf("without a link rate: wrote %d, clock %v", n, clock.total())
			}
		})
	}
}

// A server's link rate holds its responses: a 1,000,000-byte download at
// 1,000,000 B/s waits about a second on the link's clock, headers included.
func TestLinkRateServer(t *testing.T) {
	clock := &virtualClock{t: time.Unix(0, 0)}
	s, err := newServer(Options{Buckets: []string{"bkt"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.linkClk = clock
	if err := s.SetLimits(Limits{LinkRate: 1_000_000}); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 1_000_000)
	if _, err := s.PutObject("bkt", "o", data); err != nil {
		t.Fatal(err)
	}
	capRequest(t, s.Client().Transport.(*http.Transport), "GET", s.URL()+"/bkt/o", nil, len(data))
	if got, lo := clock.total(), 950*time.Millisecond; got < lo || got > lo+2*time.Millisecond {
		t.Fatalf("the link's clock waited %v, want %v plus the headers' µs", got, lo)
	}
}

// fromConn records whether its ReadFrom (the socket's sendfile) was used.
type fromConn struct {
	countConn
	readFrom int
}

func (c *fromConn) ReadFrom(r io.Reader) (int64, error) {
	c.readFrom++
	return io.Copy(io.Discard, r)
}

// A connection nothing paces keeps its socket's ReadFrom (sendfile); one
// under a link rate pays for its bytes instead.
func TestCapConnKeepsSendfile(t *testing.T) {
	var l link
	fc := &fromConn{}
	c := &capConn{Conn: fc, closed: make(chan struct{}), link: &l}
	if n, err := c.ReadFrom(bytes.NewReader(make([]byte, 1000))); n != 1000 || err != nil || fc.readFrom != 1 {
		t.Fatalf("unpaced: %d, %v, ReadFrom used %d times; want the socket's", n, err, fc.readFrom)
	}
	clock := &virtualClock{t: time.Unix(0, 0)}
	l.set(1_000_000, clock, nil)
	if n, err := c.ReadFrom(bytes.NewReader(make([]byte, 150_000))); n != 150_000 || err != nil || fc.readFrom != 1 ||
		fc.wrote != 150_000 || clock.total() != 100*time.Millisecond {
		t.Fatalf("paced: %d, %v, ReadFrom %d, wrote %d, waited %v; want 150000 written through the link in 100ms",
			n, err, fc.readFrom, fc.wrote, clock.total())
	}
}
