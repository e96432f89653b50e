//go:build darwin || freebsd || netbsd || openbsd

package state

import (
	"io/fs"
	"syscall"
)

// changeTime is a file's status change time (ctime) in nanoseconds; see
// ctime_linux.go.
func changeTime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Nano()
	}
	return 0
}
