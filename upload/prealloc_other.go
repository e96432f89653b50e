//go:build !linux

package upload

import "os"

// preallocate gives a sliced download's temporary file the object's size
// (sparse: this system has no portable fallocate).
func preallocate(f *os.File, size int64) error { return f.Truncate(size) }
