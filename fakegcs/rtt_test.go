package fakegcs

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection: the server's
// (to wrap) and the client's.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return server, client
}

// Writes return at once, however long the RTT: a thousand writes go into
// the pipeline while none of their bytes is due, and the server's close
// drops them (nothing reaches the client).
func TestRTTWritesDoNotWait(t *testing.T) {
	server, client := tcpPair(t)
	done := make(chan struct{})
	c := newRTTConn(server, time.Hour, done)
	for i := range 1000 {
		if n, err := c.Write(bytes.Repeat([]byte{byte(i)}, 100)); n != 100 || err != nil {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	close(done)
	got, _ := io.ReadAll(client)
	if len(got) != 0 {
		t.Fatalf("the client read %d bytes of an hour-long pipeline", len(got))
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after the server closed: %v", err)
	}
}

// Bytes arrive in order, no earlier than the RTT after they were written
// (a lower bound only), and the close follows them: a plain close as EOF,
// one after SetLinger(0) as a reset once the bytes before it are read.
func TestRTTDeliversInOrderThenTheClose(t *testing.T) {
	const rtt = 30 * time.Millisecond
	for _, reset := range []bool{false, true} {
		server, client := tcpPair(t)
		c := newRTTConn(server, rtt, make(chan struct{}))
		var want bytes.Buffer
		start := time.Now()
		for i := range 2000 {
			b := []byte{byte(i), byte(i >> 8), 0xa5}
			want.Write(b)
			c.Write(b)
		}
		if reset {
			setLinger0(c)
		}
		c.Close()
		if _, err := c.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("write after Close: %v", err)
		}
		first := make([]byte, 1)
		if _, err := io.ReadFull(client, first); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < rtt {
			t.Errorf("the first byte came %v after it was written, before the RTT (%v)", d, rtt)
		}
		rest, err := io.ReadAll(client)
		got := append(first, rest...)
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("reset %v: read %d bytes, differing from the %d written", reset, len(got), want.Len())
		}
		if reset != errors.Is(err, syscall.ECONNRESET) || (!reset && err != nil) {
			t.Fatalf("reset %v: the close read as %v", reset, err)
		}
	}
}
