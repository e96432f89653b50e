package upload

import (
	"context"
	"errors"
	"io/fs"
	"syscall"
	"testing"
)

// Running out of descriptors is waited out: the open is tried again.
func TestWithFDsWaitsOutEMFILE(t *testing.T) {
	tries := 0
	v, err := withFDs(context.Background(), func() (int, error) {
		tries++
		if tries < 3 {
			return 0, &fs.PathError{Op: "open", Path: "f", Err: syscall.EMFILE}
		}
		return 7, nil
	})
	if v != 7 || err != nil || tries != 3 {
		t.Fatalf("v %d, err %v after %d tries", v, err, tries)
	}
	// Other errors are not retried; a cancelled context stops the wait.
	tries = 0
	_, err = withFDs(context.Background(), func() (int, error) { tries++; return 0, fs.ErrPermission })
	if !errors.Is(err, fs.ErrPermission) || tries != 1 {
		t.Fatalf("err %v after %d tries", err, tries)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = withFDs(ctx, func() (int, error) { return 0, syscall.ENFILE })
	if !errors.Is(err, syscall.ENFILE) {
		t.Fatalf("cancelled: %v", err)
	}
}
