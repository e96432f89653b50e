//go:build !unix

package main

import "os"

func defaultTempDir(tempNeed) string { return os.TempDir() }
