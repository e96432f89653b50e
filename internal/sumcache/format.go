package sumcache

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"
)

// The file: a header naming the format and its version, the records sorted
// by path (bytewise), an index of every indexEvery-th record's path and
// offset, and a footer that locates the index. Each record carries the
// CRC32C of its bytes and the index its own, so an edit anywhere (by hand
// or by a torn disk) is found before a value is used.
//
//	header  "gcsput crc32c cache v1\n"
//	record  len uint32 | body | crc32c(body) uint32
//	body    uvarint len(path) | path | uvarint size | varint mtime_ns |
//	        varint ctime_ns | uvarint inode | uvarint device | crc32c uint32 |
//	        varint written_ns | varint seen_ns
//	index   (uvarint len(path) | path | uvarint offset)...
//	footer  index offset uint64 | records uint64 | crc32c(index) uint32 | "CKi1"
//
// Integers are big-endian.
const (
	header      = "gcsput crc32c cache v1\n"
	footerMagic = "CKi1"
	footerLen   = 8 + 8 + 4 + len(footerMagic)
	indexEvery  = 128
	// maxBody bounds a record: a path of PATH_MAX (4096) and its fields.
	maxBody = 4096 + 9*10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errCorrupt is what a record, index or header that does not check out
// reports: the whole file is then ignored.
var errCorrupt = errors.New("corrupt")

// Entry is a file's CRC32C and the identity it was read under.
type Entry struct {
	Path         string
	Size         int64
	MTime, CTime int64 // nanoseconds since the Unix epoch
	Inode, Dev   uint64
	CRC          uint32
	// Written is when the read that computed CRC began (the racy rule),
	// Seen when a run last used the entry (eviction); nanoseconds.
	Written, Seen int64
}

func appendRecord(b []byte, e *Entry) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = binary.AppendUvarint(b, uint64(len(e.Path)))
	b = append(b, e.Path...)
	b = binary.AppendUvarint(b, uint64(e.Size))
	b = binary.AppendVarint(b, e.MTime)
	b = binary.AppendVarint(b, e.CTime)
	b = binary.AppendUvarint(b, e.Inode)
	b = binary.AppendUvarint(b, e.Dev)
	b = binary.BigEndian.AppendUint32(b, e.CRC)
	b = binary.AppendVarint(b, e.Written)
	b = binary.AppendVarint(b, e.Seen)
	body := b[start+4:]
	binary.BigEndian.PutUint32(b[start:], uint32(len(body)))
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(body, castagnoli))
}

// readRecord reads the next record of r: io.EOF at a clean end.
func readRecord(r *bufio.Reader, buf []byte) (Entry, []byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			err = fmt.Errorf("%w: a record cut short", errCorrupt)
		}
		return Entry{}, buf, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxBody {
		return Entry{}, buf, fmt.Errorf("%w: a record of %d bytes", errCorrupt, size)
	}
	if cap(buf) < int(size)+4 {
		buf = make([]byte, size+4, max(size+4, 512))
	}
	buf = buf[:size+4]
	if _, err := io.ReadFull(r, buf); err != nil {
		return Entry{}, buf, fmt.Errorf("%w: a record cut short", errCorrupt)
	}
	body := buf[:size]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(buf[size:]) {
		return Entry{}, buf, fmt.Errorf("%w: a record's checksum does not match", errCorrupt)
	}
	e, err := decodeBody(body)
	return e, buf, err
}

func decodeBody(b []byte) (Entry, error) {
	d := decoder{b: b}
	var e Entry
	e.Path = string(d.bytes())
	e.Size = int64(d.uvarint())
	e.MTime = d.varint()
	e.CTime = d.varint()
	e.Inode = d.uvarint()
	e.Dev = d.uvarint()
	e.CRC = d.uint32()
	e.Written = d.varint()
	e.Seen = d.varint()
	if d.bad || len(d.b) != 0 || e.Path == "" || e.Size < 0 {
		return Entry{}, fmt.Errorf("%w: a record does not decode", errCorrupt)
	}
	return e, nil
}

// decoder reads the fields of a body; bad records any overrun.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint32() uint32 {
	if len(d.b) < 4 {
		d.bad, d.b = true, nil
		return 0
	}
	v := binary.BigEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// writer writes a file of sorted records, its index and footer.
type writer struct {
	f     *os.File
	w     *bufio.Writer
	off   int64
	count uint64
	last  string
	index []byte
	buf   []byte
}

func newWriter(f *os.File) (*writer, error) {
	w := &writer{f: f, w: bufio.NewWriterSize(f, 256<<10)}
	_, err := w.w.WriteString(header)
	w.off = int64(len(header))
	return w, err
}

// add appends e, whose path must sort after the last one added.
func (w *writer) add(e *Entry) error {
	if w.count > 0 && e.Path <= w.last {
		return fmt.Errorf("sumcache: %q written after %q", e.Path, w.last)
	}
	if w.count%indexEvery == 0 {
		w.index = binary.AppendUvarint(w.index, uint64(len(e.Path)))
		w.index = append(w.index, e.Path...)
		w.index = binary.AppendUvarint(w.index, uint64(w.off))
	}
	w.buf = appendRecord(w.buf[:0], e)
	if _, err := w.w.Write(w.buf); err != nil {
		return err
	}
	w.off += int64(len(w.buf))
	w.count++
	w.last = e.Path
	return nil
}

// finish writes the index and footer and flushes; the caller syncs.
func (w *writer) finish() error {
	var f []byte
	f = binary.BigEndian.AppendUint64(f, uint64(w.off))
	f = binary.BigEndian.AppendUint64(f, w.count)
	f = binary.BigEndian.AppendUint32(f, crc32.Checksum(w.index, castagnoli))
	f = append(f, footerMagic...)
	if _, err := w.w.Write(w.index); err != nil {
		return err
	}
	if _, err := w.w.Write(f); err != nil {
		return err
	}
	return w.w.Flush()
}

// indexEntry is where a run of indexEvery records begins.
type indexEntry struct {
	path string
	off  int64
}

// table is a cache file opened for lookups (find) or a sequential read
// (scan). Only the index is held in memory: one path per indexEvery files.
type table struct {
	f       *os.File
	recEnd  int64 // the records end, and the index begins, here
	count   uint64
	index   []indexEntry
	seg     int // the index entry whose records are in segment; -1: none
	segment []Entry
}

// openTable checks f's header and footer and reads its index.
func openTable(f *os.File) (*table, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < int64(len(header)+footerLen) {
		return nil, fmt.Errorf("%w: %d bytes", errCorrupt, size)
	}
	h := make([]byte, len(header))
	if _, err := f.ReadAt(h, 0); err != nil {
		return nil, err
	}
	if string(h) != header {
		if strings.HasPrefix(string(h), "gcsput crc32c cache ") {
			return nil, fmt.Errorf("another version's (%q)", strings.TrimSpace(string(h)))
		}
		return nil, fmt.Errorf("%w: not a checksum cache", errCorrupt)
	}
	foot := make([]byte, footerLen)
	if _, err := f.ReadAt(foot, size-int64(footerLen)); err != nil {
		return nil, err
	}
	idxOff := int64(binary.BigEndian.Uint64(foot))
	t := &table{f: f, recEnd: idxOff, count: binary.BigEndian.Uint64(foot[8:]), seg: -1}
	if string(foot[20:]) != footerMagic || idxOff < int64(len(header)) || idxOff > size-int64(footerLen) {
		return nil, fmt.Errorf("%w: its footer does not check out", errCorrupt)
	}
	idx := make([]byte, size-int64(footerLen)-idxOff)
	if _, err := f.ReadAt(idx, idxOff); err != nil {
		return nil, err
	}
	if crc32.Checksum(idx, castagnoli) != binary.BigEndian.Uint32(foot[16:]) {
		return nil, fmt.Errorf("%w: its index's checksum does not match", errCorrupt)
	}
	d := decoder{b: idx}
	for len(d.b) > 0 && !d.bad {
		e := indexEntry{path: string(d.bytes()), off: int64(d.uvarint())}
		last := len(t.index) - 1
		if e.off < int64(len(header)) || e.off >= idxOff || last >= 0 && (e.path <= t.index[last].path || e.off <= t.index[last].off) {
			d.bad = true
		}
		t.index = append(t.index, e)
	}
	if d.bad || uint64(len(t.index)) != (t.count+indexEvery-1)/indexEvery {
		return nil, fmt.Errorf("%w: its index does not decode", errCorrupt)
	}
	return t, nil
}

// find returns the entry of path, nil if there is none, or errCorrupt when
// the records it reads do not check out (or disagree with the index).
func (t *table) find(path string) (*Entry, error) {
	// The last index entry at or before path.
	lo, hi := 0, len(t.index)
	for lo < hi {
		m := int(uint(lo+hi) / 2)
		if t.index[m].path <= path {
			lo = m + 1
		} else {
			hi = m
		}
	}
	i := lo - 1
	if i < 0 {
		return nil, nil
	}
	if t.seg != i {
		if err := t.load(i); err != nil {
			return nil, err
		}
	}
	for k := range t.segment {
		if t.segment[k].Path == path {
			return &t.segment[k], nil
		}
	}
	return nil, nil
}

// load reads the records of index entry i into segment.
func (t *table) load(i int) error {
	t.seg, t.segment = -1, t.segment[:0]
	end := t.recEnd
	if i+1 < len(t.index) {
		end = t.index[i+1].off
	}
	r := bufio.NewReader(io.NewSectionReader(t.f, t.index[i].off, end-t.index[i].off))
	var buf []byte
	for {
		e, b, err := readRecord(r, buf)
		buf = b
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if n := len(t.segment); n == 0 && e.Path != t.index[i].path || n > 0 && e.Path <= t.segment[n-1].Path {
			return fmt.Errorf("%w: its records are out of order", errCorrupt)
		}
		t.segment = append(t.segment, e)
	}
	if len(t.segment) == 0 || len(t.segment) > indexEvery {
		return fmt.Errorf("%w: its index does not match its records", errCorrupt)
	}
	t.seg = i
	return nil
}

// scanner reads a table's records in order, checking each.
type scanner struct {
	r    *bufio.Reader
	buf  []byte
	last string
	n    uint64
	want uint64
}

func (t *table) scan() *scanner {
	return &scanner{r: bufio.NewReaderSize(io.NewSectionReader(t.f, int64(len(header)), t.recEnd-int64(len(header))), 64<<10), want: t.count}
}

// next returns the next record, or io.EOF after the last.
func (s *scanner) next() (Entry, error) {
	e, b, err := readRecord(s.r, s.buf)
	s.buf = b
	switch {
	case err == io.EOF && s.n != s.want:
		return Entry{}, fmt.Errorf("%w: %d records, its footer says %d", errCorrupt, s.n, s.want)
	case err != nil:
		return Entry{}, err
	case s.n > 0 && e.Path <= s.last:
		return Entry{}, fmt.Errorf("%w: its records are out of order", errCorrupt)
	}
	s.n++
	s.last = e.Path
	return e, nil
}
