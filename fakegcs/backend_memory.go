package fakegcs

import (
	"bytes"
	"io"
)

// memBackend keeps content as a list of immutable blocks. Blocks are the very
// buffers the request body was read into, so an upload costs no copy, and a
// composed object shares its sources' blocks.
type memBackend struct{}

func (memBackend) create() (contentWriter, error) { return &memWriter{}, nil }
func (memBackend) close() error                   { return nil }

func (memBackend) concat(parts []blob) (blob, error) {
	out := &memBlob{}
	for _, p := range parts {
		m := p.(*memBlob)
		out.blocks = append(out.blocks, m.blocks...)
		out.n += m.n
	}
	return out, nil
}

type memWriter struct{ b memBlob }

func (w *memWriter) keeps() bool { return true }

func (w *memWriter) write(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if len(p) < cap(p)/4 {
		// A short final block: do not pin a whole quantum for a few bytes.
		p = bytes.Clone(p)
	}
	w.b.blocks = append(w.b.blocks, p)
	w.b.n += int64(len(p))
	return nil
}

func (w *memWriter) commit() (blob, error) { b := w.b; return &b, nil }
func (w *memWriter) abort()                { w.b = memBlob{} }

type memBlob struct {
	blocks [][]byte
	n      int64
}

func (b *memBlob) size() int64 { return b.n }
func (b *memBlob) release()    {}

func (b *memBlob) open(off, n int64) (io.ReadCloser, error) {
	return &memReader{blocks: b.blocks, skip: off, left: n}, nil
}

// memReader reads a range of blocks without copying them into one slice.
type memReader struct {
	blocks [][]byte
	skip   int64 // bytes still to skip before the range starts
	left   int64 // bytes of the range still to return
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

func (r *memReader) Close() error { return nil }
