package fakegcs

import (
	"bytes"
	"io"
	"sync/atomic"
)

// memBackend keeps content as a list of blocks. A block is the very buffer
// the request body was read into, so storing costs no copy; when no object
// and no reader refers to a blob any more its blocks go back to the pool.
type memBackend struct{}

func (memBackend) create() (contentWriter, error) { return &memWriter{}, nil }
func (memBackend) close() error                   { return nil }

// concat copies the parts: blocks belong to exactly one blob, which is what
// makes recycling them safe. Compose is rare; uploads are not.
func (memBackend) concat(parts []blob) (blob, error) {
	w := &memWriter{}
	for _, p := range parts {
		rc, err := p.open(0, p.size())
		if err != nil {
			return nil, err
		}
		for {
			buf := getBlock()
			n, err := readBlock(rc, buf)
			if kept, _ := w.write(buf[:n]); !kept {
				putBlock(buf)
			}
			if err != nil {
				break
			}
		}
		rc.Close()
	}
	return w.commit()
}

type memWriter struct{ b *memBlob }

func (w *memWriter) write(p []byte) (bool, error) {
	if w.b == nil {
		w.b = newMemBlob()
	}
	if len(p) == 0 {
		return false, nil
	}
	kept := true
	if len(p) < cap(p)/4 {
		// A short final block: do not pin a whole quantum for a few bytes.
		p, kept = bytes.Clone(p), false
	}
	w.b.blocks = append(w.b.blocks, p)
	w.b.n += int64(len(p))
	return kept, nil
}

func (w *memWriter) commit() (blob, error) {
	if w.b == nil {
		w.b = newMemBlob()
	}
	b := w.b
	w.b = nil
	return b, nil
}

func (w *memWriter) abort() {
	if w.b != nil {
		w.b.release()
		w.b = nil
	}
}

type memBlob struct {
	blocks [][]byte
	n      int64
	refs   atomic.Int64 // the owner, acquirers and open readers
}

func newMemBlob() *memBlob {
	b := &memBlob{}
	b.refs.Store(1)
	return b
}

func (b *memBlob) size() int64 { return b.n }

func (b *memBlob) acquire() { b.refs.Add(1) }
func (b *memBlob) release() { b.unref() }

func (b *memBlob) unref() {
	if b.refs.Add(-1) == 0 {
		for _, blk := range b.blocks {
			putBlock(blk)
		}
		b.blocks = nil
	}
}

func (b *memBlob) open(off, n int64) (io.ReadCloser, error) {
	b.refs.Add(1)
	return &memReader{b: b, blocks: b.blocks, skip: off, left: n}, nil
}

// memReader reads a range of blocks without copying them into one slice.
type memReader struct {
	b      *memBlob
	blocks [][]byte
	skip   int64 // bytes still to skip before the range starts
	left   int64 // bytes of the range still to return
	closed bool
}

func (r *memReader) next() []byte {
	for len(r.blocks) > 0 && r.left > 0 {
		blk := r.blocks[0]
		if r.skip >= int64(len(blk)) {
			r.skip -= int64(len(blk))
			r.blocks = r.blocks[1:]
			continue
		}
		blk = blk[r.skip:]
		if int64(len(blk)) > r.left {
			blk = blk[:r.left]
		}
		return blk
	}
	return nil
}

func (r *memReader) Read(p []byte) (int, error) {
	blk := r.next()
	if blk == nil {
		return 0, io.EOF
	}
	n := copy(p, blk)
	r.consume(n)
	return n, nil
}

// WriteTo hands whole blocks to w, so serving a download copies each byte once.
func (r *memReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		blk := r.next()
		if blk == nil {
			return total, nil
		}
		n, err := w.Write(blk)
		total += int64(n)
		r.consume(n)
		if err != nil {
			return total, err
		}
	}
}

func (r *memReader) consume(n int) {
	r.skip += int64(n)
	r.left -= int64(n)
}

func (r *memReader) Close() error {
	if !r.closed {
		r.closed = true
		r.blocks = nil
		r.b.unref()
	}
	return nil
}
