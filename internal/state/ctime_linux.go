package state

import (
	"io/fs"
	"syscall"
)

// changeTime is a file's status change time (ctime) in nanoseconds, which
// every write and every utimes call moves and no unprivileged call can set
// back: an edit that restores size and mtime still changes it.
func changeTime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
