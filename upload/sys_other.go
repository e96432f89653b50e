//go:build !unix

package upload

import (
	"io/fs"
	"os"
)

// openNonblock: no non-blocking open here; openSource looks first.
const openNonblock = 0

// linkCount: hard links are not counted off Unix.
func linkCount(fs.FileInfo) uint64 { return 1 }

// openNoFollow: no such open flag here; the opened file is checked instead.
const openNoFollow = 0

// lockFile is a no-op off Unix; within one process, claims keep two
// downloads off one file.
func lockFile(*os.File) error { return nil }

// openFileLimit is unknown here.
func openFileLimit() int64 { return 0 }
