//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// childUsage returns the CPU seconds (user + system) and the peak RSS in
// bytes of an exited child, including any children it waited for (a CLI's
// worker processes).
func childUsage(ps *os.ProcessState) (cpu float64, maxRSS int64) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return (ps.UserTime() + ps.SystemTime()).Seconds(), 0
	}
	return (ps.UserTime() + ps.SystemTime()).Seconds(), maxRSSBytes(int64(ru.Maxrss))
}

// maxRSSBytes converts ru_maxrss, which Darwin gives in bytes and the other
// systems in KiB.
func maxRSSBytes(v int64) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return v
	}
	return v << 10
}

// selfCPU returns this process's CPU time so far: the servers' share of a
// run is the difference around it.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return (time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())).Seconds()
}

// peakRSS is the child's own measure of the peak resident set, in bytes: its
// own high-water mark or that of the largest process it waited for (a CLI),
// whichever is larger.
//
// The parent cannot take it from wait4: os/exec starts a child with vfork,
// and Linux folds the high-water mark of the memory the child borrowed — the
// parent's, servers and all — into the child's ru_maxrss at exec. VmHWM in
// /proc/self/status belongs to the process's own memory since exec.
func peakRSS() int64 {
	own := int64(0)
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		own = parseVmHWM(string(b))
	}
	if own == 0 {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
			own = maxRSSBytes(int64(ru.Maxrss))
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		own = max(own, maxRSSBytes(int64(ru.Maxrss)))
	}
	return own
}
