//go:build !unix

package main

import "os"

// Without rusage the peak RSS is not known.
func maxRSS(*os.ProcessState) int64 { return 0 }

// Without rusage the bytes read are not known.
func readBytes(*os.ProcessState) int64 { return -1 }
