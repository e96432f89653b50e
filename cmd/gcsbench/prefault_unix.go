//go:build unix

package main

import "syscall"

// prefault touches n bytes of fresh anonymous memory and frees them, just
// before a download is timed. On a virtual machine whose balloon reports
// free pages to the host (virtio-balloon free page reporting, two seconds
// after they are freed), a download that reuses reported pages pays a host
// fault on each first touch, and one that reuses recent ones does not: the
// same client then varies twofold between rounds. Touching the memory first
// gives every client the same start: recently freed, backed pages.
func prefault(n int64) {
	const page = 4096
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return // a measurement hygiene step: without it the figures are noisier, not wrong
	}
	for i := 0; i < len(b); i += page {
		b[i] = 1
	}
	_ = syscall.Munmap(b)
}
