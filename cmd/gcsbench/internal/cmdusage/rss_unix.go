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
