package upload

import (
	"os"
	"syscall"
)

// preallocate gives a sliced download's temporary file the object's size,
// with its blocks reserved where the filesystem allows it (fallocate), so
// slices written at once do not fragment it and a full disk fails before
// the first byte; elsewhere it is extended sparse.
func preallocate(f *os.File, size int64) error {
	switch err := syscall.Fallocate(int(f.Fd()), 0, 0, size); err {
	case nil:
		return nil
	case syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG:
		return err
	}
	return f.Truncate(size) // a filesystem without fallocate
}
