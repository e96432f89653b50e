//go:build unix

package sendfile

import (
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestWatch advances a file's offset in steps from send, as sendfile would,
// and checks that moved saw the steps while send ran and the total after.
func TestWatch(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(100, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var during, sum atomic.Int64
	var sending atomic.Bool
	var ok bool
	var total int64
	err = rc.Control(func(fd uintptr) {
		ok, total = Watch(fd, time.Millisecond, func() bool {
			sending.Store(true)
			defer sending.Store(false)
			for range 3 {
				f.Seek(200, io.SeekCurrent)
				start := sum.Load()
				for deadline := time.Now().Add(5 * time.Second); sum.Load() == start && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
			}
			f.Seek(50, io.SeekCurrent) // left for the final report
			return true
		}, func(n int64) {
			if sending.Load() {
				during.Add(n)
			}
			sum.Add(n)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !ok || total != 650 || sum.Load() != 650 {
		t.Errorf("Watch = %v, %d; moved summed to %d; want true, 650, 650", ok, total, sum.Load())
	}
	if during.Load() != 600 {
		t.Errorf("moved reported %d bytes while send ran, want 600 (three polled steps of 200)", during.Load())
	}
}

// TestWatchNoInterval reports only once, at the end.
func TestWatchNoInterval(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rc, _ := f.SyscallConn()
	var calls []int64
	var total int64
	rc.Control(func(fd uintptr) {
		_, total = Watch(fd, 0, func() bool { f.Seek(123, io.SeekCurrent); return false }, func(n int64) { calls = append(calls, n) })
	})
	if total != 123 || len(calls) != 1 || calls[0] != 123 {
		t.Errorf("total %d, moved calls %v; want 123, [123]", total, calls)
	}
}
