package fakegcs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
)

// dirBackend streams content to one file per upload under dir. Files are
// named by a random id, never by object name, so no name can escape dir and
// an overwrite never touches the file a running download reads. Metadata is
// kept in memory only: a restarted server does not see earlier objects.
type dirBackend struct{ dir string }

func newDirBackend(dir string) (backend, error) {
	if dir == "" {
		return nil, errors.New("fakegcs: the dir backend needs Options.Dir")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fakegcs: %w", err)
	}
	return dirBackend{dir: dir}, nil
}

func (d dirBackend) close() error { return nil }

func (d dirBackend) newFile() (*os.File, error) {
	var id [12]byte
	_, _ = rand.Read(id[:])
	return os.OpenFile(filepath.Join(d.dir, "fakegcs-"+hex.EncodeToString(id[:])), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
}

func (d dirBackend) create() (contentWriter, error) {
	f, err := d.newFile()
	if err != nil {
		return nil, fmt.Errorf("fakegcs: %w", err)
	}
	return &dirWriter{f: f}, nil
}

func (d dirBackend) concat(parts []blob) (blob, error) {
	f, err := d.newFile()
	if err != nil {
		return nil, fmt.Errorf("fakegcs: %w", err)
	}
	w := &dirWriter{f: f}
	for _, p := range parts {
		rc, err := p.open(0, p.size())
		if err == nil {
			var n int64
			n, err = io.Copy(f, rc)
			rc.Close()
			w.n += n
		}
		if err != nil {
			w.abort()
			return nil, fmt.Errorf("fakegcs: %w", err)
		}
	}
	return w.commit()
}

type dirWriter struct {
	f *os.File
	n int64
}

func (w *dirWriter) write(p []byte) (bool, error) {
	n, err := w.f.Write(p)
	w.n += int64(n)
	return false, err
}

func (w *dirWriter) commit() (blob, error) {
	name := w.f.Name()
	if err := w.f.Close(); err != nil {
		os.Remove(name)
		return nil, err
	}
	b := &dirBlob{path: name, n: w.n}
	b.refs.Store(1)
	return b, nil
}

func (w *dirWriter) abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

// dirBlob is one file. An open file stays readable after its removal, so
// only acquirers, which open the file later, hold references.
type dirBlob struct {
	path string
	n    int64
	refs atomic.Int64 // the owner and acquirers
}

func (b *dirBlob) size() int64 { return b.n }
func (b *dirBlob) acquire()    { b.refs.Add(1) }

func (b *dirBlob) release() {
	if b.refs.Add(-1) == 0 {
		os.Remove(b.path)
	}
}

func (b *dirBlob) open(off, n int64) (io.ReadCloser, error) {
	f, err := os.Open(b.path)
	if err != nil {
		return nil, err
	}
	return &sectionFile{SectionReader: io.NewSectionReader(f, off, n), f: f}, nil
}

type sectionFile struct {
	*io.SectionReader
	f *os.File
}

func (s *sectionFile) Close() error { return s.f.Close() }
