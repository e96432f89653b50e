package resumable

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/gcsput/gcsput/internal/sendfile"
)

// Uploads from an *os.File go out with sendfile(2) when the connection is
// plain TCP (an emulator, fakegcs, a local proxy): net/http hands a request
// body that implements syscall.Conn to the kernel, which copies the file to
// the socket without the bytes passing through this process. The CRC32C of
// such a chunk is taken by a second goroutine that reads the same bytes from
// the page cache while the kernel sends them, so hashing and sending overlap
// instead of alternating. Over TLS (GCS itself) net/http cannot use sendfile
// and calls Read, which hashes the bytes as they go out.
//
// sendfile reads from the descriptor's offset, which a caller's *os.File
// shares with whoever else reads it, so an upload opens a descriptor of its
// own on the same file (privateFile) and lends it to one attempt at a time.

// privFile is an upload's own descriptor on its source file.
type privFile struct {
	mu     sync.Mutex
	f      *os.File
	lent   bool // an attempt's body holds it
	closed bool // the upload ended: whoever holds it last closes it
}

// lend positions the descriptor at off for one attempt. It reports false
// when an earlier attempt's sendfile is still running (net/http can go on
// writing a body after RoundTrip returned); that attempt reads with pread.
func (p *privFile) lend(off int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lent || p.closed {
		return false
	}
	if _, err := p.f.Seek(off, io.SeekStart); err != nil {
		return false
	}
	p.lent = true
	return true
}

func (p *privFile) giveBack() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lent = false
	if p.closed {
		p.f.Close()
	}
}

// close ends the descriptor now, or when the attempt holding it gives it back.
func (p *privFile) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	if !p.lent {
		p.f.Close()
	}
}

// fileChunk reads one chunk [pos, end) through the lent descriptor's offset,
// so that Read and a sendfile that net/http starts after a few Reads
// continue each other.
type fileChunk struct {
	p        *privFile
	pos, end int64 // object offsets; the descriptor's offset is pos
}

func (c *fileChunk) Read(b []byte) (int, error) {
	if c.pos >= c.end {
		return 0, io.EOF
	}
	if int64(len(b)) > c.end-c.pos {
		b = b[:c.end-c.pos]
	}
	n, err := c.p.f.Read(b)
	c.pos += int64(n)
	return n, err
}

// errNoSendfile makes net's sendfile step aside for an ordinary body.
var errNoSendfile = errors.New("resumable: body is not backed by a file")

// SyscallConn offers the chunk's file to net/http's sendfile. It fails,
// which makes net/http fall back to Read, for bodies not read from a file.
func (b *body) SyscallConn() (syscall.RawConn, error) {
	fc, ok := b.r.(*fileChunk)
	if !ok {
		return nil, errNoSendfile
	}
	raw, err := fc.p.f.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &sendfileConn{RawConn: raw, b: b, fc: fc}, nil
}

// sendfileConn is the chunk file's RawConn as net's sendfile sees it: its
// Read runs the kernel copy while a goroutine hashes the same bytes, and
// tells the watchdog about the offset as it advances.
type sendfileConn struct {
	syscall.RawConn
	b  *body
	fc *fileChunk
}

// watchEvery is how often a running sendfile's offset is read to tell the
// watchdog (and progress) that bytes moved.
const watchEvery = 100 * time.Millisecond

func (c *sendfileConn) Read(send func(fd uintptr) bool) error {
	b, fc := c.b, c.fc
	b.mu.Lock()
	if b.sealed || b.srcErr != nil {
		b.mu.Unlock()
		return errSealed // net/http falls back to Read, which reports it
	}
	b.inSendfile = true
	start := fc.pos
	var hd *digest // the tentative digest continued over [start, end)
	if b.d != nil {
		hd = b.d.clone()
	}
	b.mu.Unlock()

	hashed := make(chan error, 1)
	if hd != nil {
		go func() { hashed <- hashFile(hd, fc.p.f, start, fc.end) }()
	} else {
		hashed <- nil
	}
	every := watchEvery
	if b.dog == nil {
		every = 0
	} else {
		every = min(every, b.dog.timeout/4)
	}
	var moved int64
	err := c.RawConn.Read(func(fd uintptr) bool {
		var done bool
		done, moved = sendfile.Watch(fd, every, func() bool { return send(fd) }, func(int64) { b.dog.moved() })
		return done
	})
	herr := <-hashed

	b.mu.Lock()
	defer b.mu.Unlock()
	b.inSendfile = false
	fc.pos += moved
	b.sent += moved
	if b.sendfiled != nil {
		b.sendfiled.Add(moved)
	}
	switch {
	case moved == 0:
		// sendfile did nothing (or was declined): Read sends the chunk and
		// keeps hashing b.d.
	case hd != nil && herr == nil && fc.pos == fc.end:
		b.d = hd
	default:
		b.d = nil // part sent: no digest of exactly the sent bytes; ack re-reads
	}
	if b.sealed {
		fc.p.giveBack()
	}
	return err
}

// hashBufs are the hashing goroutine's read buffers.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// hashFile adds bytes [from, to) of f to d, reading with pread.
func hashFile(d *digest, f *os.File, from, to int64) error {
	bp := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(bp)
	_, err := io.CopyBuffer(onlyWriter{d}, io.NewSectionReader(f, from, to-from), *bp)
	if err == nil && d.off != to {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// onlyWriter hides io.ReaderFrom-like methods so CopyBuffer uses the buffer.
type onlyWriter struct{ io.Writer }
