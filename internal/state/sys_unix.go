//go:build unix

package state

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// fileID returns the device and inode of a file, part of its fingerprint.
func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// lockFile takes an exclusive advisory lock on f without waiting; it fails
// while another open file description (this process or another) holds it.
// The lock goes with the last close.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// isBusy reports whether lockFile failed because another holds the lock.
func isBusy(err error) bool { return errors.Is(err, syscall.EWOULDBLOCK) }

// noFollow makes an open fail on a symbolic link.
const noFollow = syscall.O_NOFOLLOW

// ownerChecked: this OS has file owners and permission bits to check.
const ownerChecked = true

// fileOwner returns the user that owns a file.
func fileOwner(fi fs.FileInfo) (int, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), true
	}
	return 0, false
}

// removeFile removes a record file. os.Remove would try rmdir after a
// failed unlink, a second system call for the common "not there".
func removeFile(p string) error {
	for {
		err := syscall.Unlink(p)
		if err != syscall.EINTR {
			if err != nil {
				return &fs.PathError{Op: "unlink", Path: p, Err: err}
			}
			return nil
		}
	}
}
