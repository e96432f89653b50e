//go:build unix

package sumcache

import (
	"os"
	"syscall"
)

const noFollow = syscall.O_NOFOLLOW

// tryLock locks f without waiting (a temporary file, while its writer lives).
func tryLock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// lockDir takes the lock file p, waiting for another process's merge to end.
func lockDir(p string) (func(), error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
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
