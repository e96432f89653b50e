//go:build !unix

package state

import (
	"io/fs"
	"os"
)

// fileID has no portable equivalent off Unix: the fingerprint relies on size
// and modification time there.
func fileID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }

// syncDir is a no-op where directories cannot be opened for fsync.
func syncDir(string) error { return nil }

// lockFile is a no-op off Unix: every leftover temporary record counts as a
// dead writer's.
func lockFile(*os.File) error { return nil }

// isBusy: lockFile never fails here.
func isBusy(error) bool { return false }

// noFollow: no such open flag here; the opened file is checked instead.
const noFollow = 0

// ownerChecked: Windows has no Unix owner or permission bits; the state
// directory's ACLs are the user's to set.
const ownerChecked = false

// fileOwner is unknown off Unix.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }

// removeFile removes a record file.
func removeFile(p string) error { return os.Remove(p) }
