package fakegcs

import "io"

// discardBackend counts bytes and forgets them; the Server still records the
// hashes it computed while receiving, so object metadata stays truthful.
type discardBackend struct{}

func (discardBackend) create() (contentWriter, error) { return &discardWriter{}, nil }
func (discardBackend) close() error                   { return nil }

func (discardBackend) concat(parts []blob) (blob, error) {
	var n int64
	for _, p := range parts {
		n += p.size()
	}
	return discardBlob(n), nil
}

type discardWriter struct{ n int64 }

func (w *discardWriter) write(p []byte) (bool, error) { w.n += int64(len(p)); return false, nil }
func (w *discardWriter) commit() (blob, error)        { return discardBlob(w.n), nil }
func (w *discardWriter) abort()                       {}

type discardBlob int64

func (b discardBlob) size() int64 { return int64(b) }
func (b discardBlob) acquire()    {}
func (b discardBlob) release()    {}

func (b discardBlob) open(off, n int64) (io.ReadCloser, error) {
	return io.NopCloser(io.LimitReader(zeros{}, n)), nil
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
