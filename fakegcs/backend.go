package fakegcs

import (
	"fmt"
	"io"
)

// Backend names accepted by [Options].Backend.
const (
	// BackendMemory keeps object bytes in memory, in 256 KiB blocks that are
	// shared, never copied, between an upload, its object and composed objects.
	BackendMemory = "memory"
	// BackendDir streams object bytes to files under [Options].Dir; only one
	// 256 KiB buffer per request is held in memory.
	BackendDir = "dir"
	// BackendDiscard keeps sizes, hashes and generations but not the bytes, so
	// benchmarks measure the client rather than the fake. A download returns
	// zero bytes of the object's size with the hashes of what was uploaded:
	// it verifies only if zeros were uploaded.
	BackendDiscard = "discard"
)

// quantum is GCS's resumable-upload granularity: a non-final chunk is a
// multiple of it, and the server persists whole quanta only. Every backend
// receives bytes in blocks of at most this size aligned to it, which is what
// lets a fault "persist only part of a chunk" without any rollback.
const quantum = 256 << 10

// backend stores object content. Metadata (names, generations, hashes) lives
// in the Server; a backend only holds bytes.
type backend interface {
	// create starts the content of one upload.
	create() (contentWriter, error)
	// concat makes a new blob holding the parts one after another (compose,
	// copy). Parts stay valid.
	concat(parts []blob) (blob, error)
	// close releases everything the backend holds.
	close() error
}

// contentWriter receives an upload's bytes in order. It is used by one
// goroutine at a time (the session lock serialises chunk requests).
type contentWriter interface {
	// write appends p, a prefix of a buffer from getBlock. kept reports
	// that the writer took the buffer over (no copy); otherwise the caller
	// still owns it and returns it with putBlock when done with it.
	write(p []byte) (kept bool, err error)
	// commit ends the upload and returns its content.
	commit() (blob, error)
	// abort drops the content.
	abort()
}

// blob is the immutable content of one object generation.
type blob interface {
	size() int64
	// open returns n bytes from off; off+n must not exceed size().
	open(off, n int64) (io.ReadCloser, error)
	// acquire adds a reference: the blob stays openable until a matching
	// release. The object that holds a blob owns its first reference; a
	// request that finds the blob under Server.mu and opens it after
	// unlocking acquires it first, so that a concurrent overwrite or delete,
	// which releases the object's reference, cannot free it in between.
	acquire()
	// release drops a reference; the last one frees the content. Readers
	// opened before stay readable until closed.
	release()
}

func newBackend(name, dir string) (backend, error) {
	switch name {
	case "", BackendMemory:
		return memBackend{}, nil
	case BackendDir:
		return newDirBackend(dir)
	case BackendDiscard:
		return discardBackend{}, nil
	}
	return nil, fmt.Errorf("fakegcs: unknown backend %q (want %q, %q or %q)", name, BackendMemory, BackendDir, BackendDiscard)
}
