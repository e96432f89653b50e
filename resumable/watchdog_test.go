package resumable

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// slowDisk is a file whose reads at one offset take a while.
type slowDisk struct {
	*bytes.Reader
	at    int64
	delay time.Duration
	hits  atomic.Int32
}

func (s *slowDisk) ReadAt(p []byte, off int64) (int, error) {
	if off == s.at {
		s.hits.Add(1)
		time.Sleep(s.delay)
	}
	return s.Reader.ReadAt(p, off)
}

// TestStallIgnoresSlowSource: time spent reading the source does not count
// against the network, so a slow disk triggers no retry.
func TestStallIgnoresSlowSource(t *testing.T) {
	e := newEnv(t, kib256)
	e.c.stall = 60 * time.Millisecond
	data := testData(3 * kib256)
	src := &slowDisk{Reader: bytes.NewReader(data), at: kib256 + 32<<10, delay: 150 * time.Millisecond}
	s, err := e.c.Start(context.Background(), ObjectSpec{Bucket: "bkt", Name: "o", Size: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := e.c.Upload(context.Background(), s, src)
	if err != nil {
		t.Fatal(err)
	}
	e.checkStored(t, "o", data, obj.Crc32c)
	if src.hits.Load() == 0 || len(e.clk.Sleeps()) != 0 {
		t.Fatalf("slow reads %d, retries %d: want >0 and 0", src.hits.Load(), len(e.clk.Sleeps()))
	}
}

// TestStallError: a stalled status query is abandoned with a StallError,
// which is a net.Error timeout (retryable), and the retry event says so.
func TestStallError(t *testing.T) {
	e := newEnv(t, kib256)
	e.c.stall = 50 * time.Millisecond
	data := testData(2 * kib256)
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: at(kib256), Kind: fakegcs.KindReset})
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseStatus, Kind: fakegcs.KindStall, Delay: 2 * time.Second})
	obj, err := e.upload(t, data, false)
	if err != nil {
		t.Fatal(err)
	}
	e.checkStored(t, "o", data, obj.Crc32c)
	var stalls int
	for _, ev := range e.events {
		var se *StallError
		var ne net.Error
		if ev.Kind == EventRetry && errors.As(ev.Err, &se) && errors.Is(ev.Err, ErrStalled) && errors.As(ev.Err, &ne) && ne.Timeout() {
			stalls++
			if se.Op != "status" || se.Idle != 50*time.Millisecond {
				t.Errorf("stall error %+v", se)
			}
		}
	}
	if stalls != 1 || len(e.clk.Sleeps()) != 2 {
		t.Fatalf("stall retries %d, waits %d; want 1 and 2", stalls, len(e.clk.Sleeps()))
	}
}

// TestStallDisabled: a negative StallTimeout turns the watchdog off.
func TestStallDisabled(t *testing.T) {
	ctx, w := startWatchdog(context.Background(), -1)
	if w != nil || ctx != context.Background() {
		t.Fatal("a disabled watchdog still runs")
	}
	w.moved()
	w.pause()
	w.resume()
	if err := w.stop("x", errors.New("e")); err.Error() != "e" {
		t.Fatal(err)
	}
}

// TestWatchdogCallerCancel: the caller's own cancellation is not a stall.
func TestWatchdogCallerCancel(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	ctx, w := startWatchdog(parent, 10*time.Millisecond)
	cancel()
	<-ctx.Done()
	time.Sleep(20 * time.Millisecond) // let the timer fire after the cancel
	if err := w.stop("chunk", context.Canceled); errors.Is(err, ErrStalled) {
		t.Fatalf("caller cancel reported as %v", err)
	}
}
