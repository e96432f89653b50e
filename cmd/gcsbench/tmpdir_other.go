//go:build !unix

package main

import "os"

func defaultTempDir(need int64) string { return os.TempDir() }
