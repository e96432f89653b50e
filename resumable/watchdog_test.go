package resumable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/retrytest"
)

// slowDisk is a file whose reads at one offset take a while: the watchdog's
// clock moves by delay during them.
type slowDisk struct {
	*bytes.Reader
	at    int64
	delay time.Duration
	clock *retrytest.Clock
	hits  atomic.Int32
}

func (s *slowDisk) ReadAt(p []byte, off int64) (int, error) {
	if off == s.at {
		s.hits.Add(1)
		s.clock.Advance(s.delay)
	}
	return s.Reader.ReadAt(p, off)
}

// TestStallIgnoresSlowSource: time spent reading the source does not count
// against the network, so a slow disk triggers no retry.
func TestStallIgnoresSlowSource(t *testing.T) {
	e := newEnv(t, kib256)
	wclk := retrytest.NewClock()
	e.c.stall, e.c.clock = 60*time.Millisecond, wclk
	data := testData(3 * kib256)
	src := &slowDisk{Reader: bytes.NewReader(data), at: kib256 + 32<<10, delay: 150 * time.Millisecond, clock: wclk}
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
	// When the stalled status query reaches the server, the watchdog's clock
	// moves past the stall timeout: no real time passes.
	wclk := retrytest.NewClock()
	e := newEnvWith(t, kib256, fakegcs.Options{Logf: func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); strings.Contains(msg, "injecting stall") {
			go wclk.Advance(time.Minute)
		}
	}})
	e.c.stall, e.c.clock = 50*time.Millisecond, wclk
	data := testData(2 * kib256)
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: at(kib256), Kind: fakegcs.KindReset})
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseStatus, Kind: fakegcs.KindStall, Delay: time.Hour})
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
		for _, ev := range e.events {
			t.Logf("%s", ev)
		}
		t.Fatalf("stall retries %d, waits %d; want 1 and 2", stalls, len(e.clk.Sleeps()))
	}
}

// TestStallDisabled: a negative StallTimeout turns the watchdog off.
func TestStallDisabled(t *testing.T) {
	ctx, w := startWatchdog(context.Background(), -1, retry.RealClock)
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
	clk := retrytest.NewClock()
	ctx, w := startWatchdog(parent, 10*time.Millisecond, clk)
	cancel()
	<-ctx.Done()
	clk.Advance(20 * time.Millisecond) // the timer fires after the cancel
	if err := w.stop("chunk", context.Canceled); errors.Is(err, ErrStalled) {
		t.Fatalf("caller cancel reported as %v", err)
	}
}
