package upload

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Open files are bounded twice. New lowers Parallelism to what the
// process's open-file limit can hold (fdsPerWorker each, fdReserve kept for
// the rest of the process), with a warning. And an open that still meets
// EMFILE or ENFILE (another part of the program, or the system, ran out) is
// back-pressure, not a failed file: it waits for descriptors to be released
// and tries again, for up to fdPatience.

// fdsPerWorker is what one transfer holds at most: its file, the
// destination directory of a download, and two connections (the transfer's
// and a metadata call's).
const fdsPerWorker = 4

// fdReserve is left for everything else: standard streams, the state
// directory, the network poller, idle connections, the walker's directory.
const fdReserve = 32

// fdPatience is how long an open waits for descriptors before the file
// fails.
const fdPatience = 2 * time.Minute

// maxParallelism is the parallelism the open-file limit allows, or 0 when
// the limit is unknown.
func maxParallelism() int {
	lim := openFileLimit()
	if lim <= 0 {
		return 0
	}
	return int(max(1, (lim-fdReserve)/fdsPerWorker))
}

// outOfFDs reports whether err is the process (EMFILE) or the system
// (ENFILE) running out of file descriptors.
func outOfFDs(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// withFDs runs open, and runs it again while it fails for want of file
// descriptors, waiting 10 ms, 20 ms, ... up to 1 s between tries, for up to
// fdPatience or until ctx ends.
func withFDs[T any](ctx context.Context, open func() (T, error)) (T, error) {
	wait, deadline := 10*time.Millisecond, time.Now().Add(fdPatience)
	for {
		v, err := open()
		if err == nil || !outOfFDs(err) {
			return v, err
		}
		if time.Now().After(deadline) {
			return v, fmt.Errorf("%w (waited %v for open files to be released: raise the limit with 'ulimit -n', or transfer fewer files at once)", err, fdPatience)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}
