package main

import (
	"strconv"
	"strings"
)

// parseVmHWM returns the VmHWM line of a /proc/PID/status text in bytes, or
// 0 when there is none.
func parseVmHWM(status string) int64 {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0
		}
		return n << 10
	}
	return 0
}
