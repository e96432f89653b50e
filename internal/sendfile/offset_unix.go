//go:build unix

package sendfile

import (
	"io"
	"syscall"
)

// offset is fd's current offset (lseek SEEK_CUR), which a concurrent
// sendfile(2) advances.
func offset(fd uintptr) (int64, error) {
	for {
		off, err := syscall.Seek(int(fd), 0, io.SeekCurrent)
		if err != syscall.EINTR {
			return off, err
		}
	}
}
