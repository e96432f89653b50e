package fakegcs

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"strings"
	"sync"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// hasher is the running CRC32C and MD5 of an upload. It is fed each block
// once, as it is persisted, so no upload is ever re-hashed from its start.
type hasher struct {
	crc uint32
	md5 hash.Hash // nil when MD5 is disabled
}

func newHasher(withMD5 bool) hasher {
	h := hasher{}
	if withMD5 {
		h.md5 = md5.New()
	}
	return h
}

func (h *hasher) write(p []byte) {
	h.crc = crc32.Update(h.crc, castagnoli, p)
	if h.md5 != nil {
		h.md5.Write(p)
	}
}

func (h *hasher) sum() (crc uint32, md5sum []byte) {
	if h.md5 != nil {
		md5sum = h.md5.Sum(nil)
	}
	return h.crc, md5sum
}

func encodeCRC(c uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], c)
	return base64.StdEncoding.EncodeToString(b[:])
}

func decodeCRC(s string) (uint32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 4 {
		return 0, fmt.Errorf("invalid crc32c %q", s)
	}
	return binary.BigEndian.Uint32(b), nil
}

// wantHashes are hashes a client declared for the content it sends, either in
// the object metadata (crc32c, md5Hash) or in an X-Goog-Hash header.
type wantHashes struct {
	crc    *uint32
	md5    []byte
	crcSrc string // the encoded value as sent, for the error message
	md5Src string
}

// parseGoogHash reads "crc32c=<b64>,md5=<b64>" (one header or several).
func parseGoogHash(values []string) (wantHashes, *apiError) {
	var w wantHashes
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
			if !ok {
				return w, errf(400, "invalid", "Invalid X-Goog-Hash header %q", v)
			}
			if err := w.set(k, val); err != nil {
				return w, err
			}
		}
	}
	return w, nil
}

func (w *wantHashes) set(kind, val string) *apiError {
	switch kind {
	case "crc32c":
		c, err := decodeCRC(val)
		if err != nil {
			return errf(400, "invalid", "Invalid crc32c value %q", val)
		}
		w.crc, w.crcSrc = &c, val
	case "md5":
		b, err := base64.StdEncoding.DecodeString(val)
		if err != nil || len(b) != md5.Size {
			return errf(400, "invalid", "Invalid md5 value %q", val)
		}
		w.md5, w.md5Src = b, val
	}
	return nil
}

func (w *wantHashes) merge(o wantHashes) {
	if o.crc != nil {
		w.crc, w.crcSrc = o.crc, o.crcSrc
	}
	if o.md5 != nil {
		w.md5, w.md5Src = o.md5, o.md5Src
	}
}

// check answers 400 with GCS's wording when a declared hash differs from the
// computed one. An MD5 cannot be checked when MD5 hashing is disabled.
func (w wantHashes) check(crc uint32, md5sum []byte) *apiError {
	if w.crc != nil && *w.crc != crc {
		return errf(400, "invalid", "Provided CRC32C %q doesn't match calculated CRC32C %q.", w.crcSrc, encodeCRC(crc))
	}
	if w.md5 != nil && md5sum != nil && !bytes.Equal(w.md5, md5sum) {
		return errf(400, "invalid", "Provided MD5 hash %q doesn't match calculated MD5 hash %q.", w.md5Src, base64.StdEncoding.EncodeToString(md5sum))
	}
	return nil
}

// crcCombine returns the CRC32C of A||B from crc(A), crc(B) and len(B), so
// compose never re-reads its sources (zlib's crc32_combine, Castagnoli
// polynomial).
func crcCombine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	var even, odd [32]uint32
	odd[0] = 0x82f63b78 // reversed Castagnoli polynomial
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd)
	gf2Square(&odd, &even)
	for {
		gf2Square(&even, &odd)
		if lenB&1 != 0 {
			crcA = gf2Times(&even, crcA)
		}
		lenB >>= 1
		if lenB == 0 {
			break
		}
		gf2Square(&odd, &even)
		if lenB&1 != 0 {
			crcA = gf2Times(&odd, crcA)
		}
		lenB >>= 1
		if lenB == 0 {
			break
		}
	}
	return crcA ^ crcB
}

func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(square, mat *[32]uint32) {
	for n := range 32 {
		square[n] = gf2Times(mat, mat[n])
	}
}

// hashPipe feeds blocks to a hasher on a goroutine of its own, in order, so
// that hashing a block (MD5 is the costliest thing fakegcs does per byte)
// overlaps with receiving the next. The goroutine runs only while blocks
// are pending and exits when the queue is empty, so an abandoned upload
// leaves nothing running.
type hashPipe struct {
	h  *hasher
	ch chan hashJob

	mu      sync.Mutex
	idle    *sync.Cond
	pending int
	running bool
}

type hashJob struct {
	p       []byte
	recycle bool // return p to the pool once hashed
}

func newHashPipe(h *hasher) *hashPipe {
	hp := &hashPipe{h: h, ch: make(chan hashJob, 4)}
	hp.idle = sync.NewCond(&hp.mu)
	return hp
}

// add queues p; it blocks while 4 blocks (1 MiB) are waiting: a short
// queue keeps the blocks in cache between the copy and the hash.
func (hp *hashPipe) add(p []byte, recycle bool) {
	hp.mu.Lock()
	hp.pending++
	start := !hp.running
	hp.running = true
	hp.mu.Unlock()
	if start {
		go hp.run()
	}
	hp.ch <- hashJob{p, recycle}
}

func (hp *hashPipe) run() {
	for j := range hp.ch {
		hp.h.write(j.p)
		if j.recycle {
			putBlock(j.p)
		}
		hp.mu.Lock()
		hp.pending--
		if hp.pending == 0 {
			hp.running = false
			hp.idle.Broadcast()
			hp.mu.Unlock()
			return
		}
		hp.mu.Unlock()
	}
}

// wait returns when every queued block is hashed; the hasher may then be
// read.
func (hp *hashPipe) wait() {
	hp.mu.Lock()
	for hp.pending > 0 {
		hp.idle.Wait()
	}
	hp.mu.Unlock()
}
