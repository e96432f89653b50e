//go:build unix

package upload

import (
	"io/fs"
	"os"
	"syscall"
)

// openNonblock opens a source without blocking if it is a named pipe.
const openNonblock = syscall.O_NONBLOCK

// linkCount is the number of hard links of a file (1 when unknown).
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// openNoFollow makes an open fail on a symbolic link.
const openNoFollow = syscall.O_NOFOLLOW

// lockFile takes an exclusive advisory lock on f without waiting; it fails
// while another open file description (this process or another) holds it.
// The lock goes with the last close.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// openFileLimit is the process's open-file limit (RLIMIT_NOFILE), or 0.
func openFileLimit() int64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int64(rl.Cur)
}
