//go:build !unix

package main

// prefault is a no-op where anonymous mmap is not available.
func prefault(int64) {}
