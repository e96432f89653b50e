// Package sendfile follows a file descriptor's offset while net/http hands
// the file to sendfile(2). sendfile moves the bytes inside the kernel,
// without one Read call a wrapper could count, and it advances the
// descriptor's offset as it goes: that offset is the only sign of progress.
package sendfile

import "time"

// Watch runs send, which moves fd's offset forward, and reports every advance
// of the offset to moved: every interval while send runs (interval <= 0: only
// at the end), and whatever is left when send returns. moved is never called
// concurrently with itself, and never after Watch returns. Watch returns
// send's result and the total advance; when fd's offset cannot be read it
// runs send alone and reports nothing.
func Watch(fd uintptr, interval time.Duration, send func() bool, moved func(n int64)) (ok bool, total int64) {
	start, err := offset(fd)
	if err != nil {
		return send(), 0
	}
	last := start
	report := func() {
		if cur, err := offset(fd); err == nil && cur > last {
			moved(cur - last)
			last = cur
		}
	}
	if interval <= 0 {
		ok = send()
		report()
		return ok, last - start
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				report()
			}
		}
	}()
	ok = send()
	close(stop)
	<-done
	report()
	return ok, last - start
}
