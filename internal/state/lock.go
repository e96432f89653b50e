package state

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A live transfer holds the lock of its key, an advisory lock (flock) on
// KEY.lock in the store, from before it reads its record until after its
// last save: a second process (sessions cancel, sessions gc, a second run
// of the same transfer) that cannot take the lock leaves the record, the
// session and the partial file alone. The kernel drops the lock when the
// process dies, so a killed transfer never holds one. The file holds the
// holder's process id, for messages only: it is never signalled. Off Unix
// locks always succeed.
//
// Asking a live transfer to stop is a file beside the lock, KEY.stop,
// that the holder looks for (see StopRequested): the request reaches the
// one transfer that holds the lock, whichever process and host it runs in,
// and cannot reach another process by a recycled pid.

// ErrBusy is matched (errors.Is) by the error of Lock when another transfer
// holds the key.
var ErrBusy = errors.New("in use by a running transfer")

// BusyError is the error of Lock when another transfer holds the key.
type BusyError struct {
	Path string // the lock file
	PID  int    // the holder's process id, as it wrote it; 0 if unknown
}

func (e *BusyError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%v (pid %d)", ErrBusy, e.PID)
	}
	return ErrBusy.Error()
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// Lock is a held lock of a key; Release gives it up.
type Lock struct {
	f    *os.File
	path string
}

func (s *Store) lockPath(key string) string { return filepath.Join(s.Dir, key+".lock") }
func (s *Store) stopPath(key string) string { return filepath.Join(s.Dir, key+".stop") }

// Lock takes the lock of key without waiting, or returns a *BusyError
// (matching ErrBusy) when another transfer holds it.
func (s *Store) Lock(key string) (*Lock, error) {
	path := s.lockPath(key)
	// A holder removes the file as it releases it: the file opened may be
	// one just removed, whose lock protects nothing. Then open again.
	for range 3 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
		if err != nil {
			return nil, err
		}
		if err := lockFile(f); err != nil {
			pid := readPID(f)
			f.Close()
			if isBusy(err) {
				return nil, &BusyError{Path: path, PID: pid}
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		held, err := f.Stat()
		now, lerr := os.Lstat(path)
		if err == nil && lerr == nil && os.SameFile(held, now) {
			_ = f.Truncate(0)
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			return &Lock{f: f, path: path}, nil
		}
		f.Close()
	}
	return nil, &BusyError{Path: path}
}

// readPID reads the process id a holder wrote in its lock file (0 if none).
func readPID(f *os.File) int {
	b, _ := io.ReadAll(io.LimitReader(f, 32))
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Release removes the lock file, then gives up the lock: removed while
// held, so whoever opened it meanwhile sees it gone (see Lock). Releasing
// a nil Lock does nothing.
func (l *Lock) Release() {
	if l == nil {
		return
	}
	os.Remove(l.path)
	l.f.Close()
}

// RequestStop asks the transfer that holds key's lock to stop (see
// StopRequested). It is repeated while waiting for the lock, so a transfer
// that took the lock in between is asked too.
func (s *Store) RequestStop(key string) error {
	f, err := os.OpenFile(s.stopPath(key), os.O_WRONLY|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// StopRequested reports whether someone asked the holder of key's lock to
// stop.
func (s *Store) StopRequested(key string) bool {
	_, err := os.Lstat(s.stopPath(key))
	return err == nil
}

// ClearStop removes a request to stop: the requester's once it holds the
// lock, or a stale one (its requester died) by the next holder.
func (s *Store) ClearStop(key string) {
	_ = removeFile(s.stopPath(key))
}
