//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS is an exited command's ru_maxrss in bytes (Darwin gives bytes, the
// other systems KiB).
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}

// readBytes is what an exited command, and the children it waited for,
// read from block devices: ru_inblock counts 512-byte units of the same
// accounting as read_bytes in /proc/PID/io, which an exited process no
// longer has. Reads served from the page cache count nothing.
func readBytes(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return -1
	}
	return int64(ru.Inblock) * 512
}
