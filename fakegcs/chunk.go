package fakegcs

import (
	"io"
)

// receiveChunk streams a chunk's body into the session. Bytes before the
// persisted offset (a re-sent overlap) are read and dropped; the rest is
// read one 256 KiB quantum at a time and each complete quantum is persisted
// and hashed at once, so nothing is buffered beyond one quantum and nothing
// is hashed twice. A quantum cut short (client gone, fault) is not
// persisted. limit is the object offset beyond which bytes are read but not
// kept (whole quanta of a non-final chunk, or a scripted short persist).
func (x *exchange) receiveChunk(sess *session, epoch uint64, cr contentRange, persisted, limit int64) {
	body := x.r.Body
	off := cr.start
	if skip := persisted - cr.start; skip > 0 {
		n, err := io.CopyN(io.Discard, body, min(skip, cr.end+1-cr.start))
		off += n
		if err != nil {
			x.chunkReadError(err)
			return
		}
	}
	for off <= cr.end {
		buf := getBlock()
		want := min(int64(quantum-off%quantum), cr.end+1-off)
		n, err := readBlock(body, buf[:want])
		if int64(n) == want && off+want <= limit {
			if apiErr := sess.appendBlock(epoch, off, buf[:n]); apiErr != nil {
				x.fail(apiErr)
				return
			}
		} else {
			putBlock(buf)
		}
		off += int64(n)
		if err != nil && !(err == io.EOF && int64(n) == want) {
			x.chunkReadError(err)
			return
		}
	}
	x.endChunk(sess, epoch, cr)
}

// chunkReadError answers a chunk whose body could not be read in full.
func (x *exchange) chunkReadError(err error) {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	x.bodyError(err)
}

// endChunk answers a chunk that was read completely: the object when it
// completed the upload, else 308 with what is persisted.
func (x *exchange) endChunk(sess *session, epoch uint64, cr contentRange) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if err := sess.usable(epoch); err != nil {
		x.fail(err)
		return
	}
	if cr.total >= 0 && cr.total == sess.persisted {
		x.finalize(sess)
		return
	}
	x.respond308(sess.persisted)
}

// finalize turns a complete session into the object, after checking the
// hashes declared at initiation and in this request's X-Goog-Hash, and the
// preconditions. A mismatch fails the session for good. Called with
// sess.mu held.
func (x *exchange) finalize(sess *session) {
	want := sess.want
	if v := x.r.Header.Values("X-Goog-Hash"); len(v) > 0 {
		h, err := parseGoogHash(v)
		if err != nil {
			x.fail(err)
			return
		}
		want.merge(h)
	}
	sess.hp.wait()
	crc, md5sum := sess.h.sum()
	if err := want.check(crc, md5sum); err != nil {
		sess.fail(err)
		x.fail(err)
		return
	}
	content, err := sess.w.commit()
	if err != nil {
		sess.fail(errf(500, "internalError", "fakegcs: storing upload: %v", err))
		x.fail(sess.failure)
		return
	}
	attrs := sess.attrs
	attrs.CRC32C, attrs.MD5 = crc, md5sum
	obj, apiErr := x.s.commitObject(attrs, content, sess.conds)
	if apiErr != nil {
		sess.state, sess.failure = stFailed, apiErr
		x.fail(apiErr)
		return
	}
	sess.state, sess.result = stDone, obj
	x.s.inserted(obj.Bucket, obj.Name)
	x.writeObject(obj)
}
