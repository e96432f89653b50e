//go:build !unix

package upload

import (
	"io/fs"
	"os"
)

// openNonblock: no non-blocking open here; openSource looks first.
const openNonblock = 0

// fileID has no portable equivalent off Unix: the fingerprint relies on size
// and modification time there.
func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }

// syncDir is a no-op where directories cannot be opened for fsync.
func syncDir(string) error { return nil }

// linkCount: hard links are not counted off Unix.
func linkCount(fs.FileInfo) uint64 { return 1 }

// lockFile is a no-op off Unix; within one process, claims keep two
// downloads off one file.
func lockFile(*os.File) error { return nil }

// noFollow: no such open flag here; the opened file is checked instead.
const noFollow = 0

// ownerChecked: Windows has no Unix owner or permission bits; the state
// directory's ACLs are the user's to set.
const ownerChecked = false

// fileOwner is unknown off Unix.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }

// openFileLimit is unknown here.
func openFileLimit() int64 { return 0 }
