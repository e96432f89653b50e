//go:build !unix

package main

import "os"

// childUsage: without rusage only the CPU time is known.
func childUsage(ps *os.ProcessState) (cpu float64, maxRSS int64) {
	return (ps.UserTime() + ps.SystemTime()).Seconds(), 0
}

func selfCPU() float64 { return 0 }

func peakRSS() int64 { return 0 }
