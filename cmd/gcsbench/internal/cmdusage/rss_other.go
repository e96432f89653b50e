//go:build !unix

package main

import "os"

// Without rusage the peak RSS is not known.
func maxRSS(*os.ProcessState) int64 { return 0 }
