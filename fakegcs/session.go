package fakegcs

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"sync/atomic"
	"time"
)

type sessionState int

const (
	stActive sessionState = iota
	stDone
	stCancelled
	stExpired
	stFailed
)

func (st sessionState) String() string {
	return [...]string{"active", "finalized", "cancelled", "expired", "failed"}[st]
}

// session is a resumable upload. Its persisted offset is always a multiple
// of 256 KiB until the upload is finalized, because bytes reach the backend
// only in whole quanta (and the final, short block with the final chunk).
type session struct {
	id       string // the upload_id: a secret, never logged
	seq      int
	bucket   string
	name     string
	attrs    ObjectAttrs // metadata from the initiation
	conds    conds
	declared int64 // X-Upload-Content-Length, or -1
	want     wantHashes
	created  time.Time

	received atomic.Int64 // body bytes read on the session, updated as they arrive

	mu        sync.Mutex
	state     sessionState
	w         contentWriter
	h         hasher    // read only after hp.wait()
	hp        *hashPipe // hashes persisted blocks in order
	persisted int64
	total     int64  // the size a request stated, or -1
	epoch     uint64 // bumped by every request; an older request is stale
	result    ObjectAttrs
	failure   *apiError
	stats     SessionStats
}

// SessionStats describes one resumable upload session.
type SessionStats struct {
	// Seq numbers sessions from 1 in the order they were created.
	Seq    int
	Bucket string
	Object string
	// State is "active", "finalized", "cancelled", "expired" or "failed".
	State string
	// DeclaredSize is X-Upload-Content-Length, or -1 when not sent.
	DeclaredSize int64
	// Received counts request-body bytes read on the session, including
	// bytes re-sent over persisted ones and bytes a fault threw away.
	Received int64
	// Persisted is the number of bytes the session has stored.
	Persisted int64
	// Requests counts requests on the session URI; Chunks those that
	// carried bytes; StatusQueries the "bytes */..." ones.
	Requests      int
	Chunks        int
	StatusQueries int
	// Generation is the object's generation once finalized.
	Generation int64
}

func newSessionID() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (s *Server) addSession(sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.order = append(s.order, sess)
	sess.seq = len(s.order)
	s.sessions[sess.id] = sess
}

// expire ends the session as GCS does after a week: 410 from now on.
func (sess *session) expire() {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.state == stActive {
		sess.state = stExpired
		sess.abortContent()
	}
}

// abortContent drops the upload's bytes once the hasher is done reading
// them. Called with sess.mu held.
func (sess *session) abortContent() {
	sess.hp.wait()
	sess.w.abort()
}

// appendBlock persists p (a buffer from getBlock) at offset off for the
// request of the given epoch, and queues it for hashing. It takes p over
// in every case.
func (sess *session) appendBlock(epoch uint64, off int64, p []byte) *apiError {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	err := sess.usable(epoch)
	if err == nil && off != sess.persisted {
		err = errSuperseded
	}
	if err != nil {
		putBlock(p)
		return err
	}
	kept, werr := sess.w.write(p)
	sess.hp.add(p, !kept)
	if werr != nil {
		sess.fail(errf(500, "internalError", "fakegcs: storing upload: %v", werr))
		return sess.failure
	}
	sess.persisted += int64(len(p))
	return nil
}

// usable reports why a request of the given epoch may not change the
// session, or nil. Called with sess.mu held.
func (sess *session) usable(epoch uint64) *apiError {
	if epoch != sess.epoch {
		return errSuperseded
	}
	return sess.stateError()
}

// stateError is the answer for a session that no longer takes bytes.
func (sess *session) stateError() *apiError {
	switch sess.state {
	case stCancelled:
		return errCancelled
	case stExpired:
		return errSessionExpired
	case stFailed:
		return sess.failure
	}
	return nil
}

func (sess *session) fail(e *apiError) {
	sess.state = stFailed
	sess.failure = e
	sess.abortContent()
}

func (sess *session) snapshot() SessionStats {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	st := sess.stats
	st.Seq, st.Bucket, st.Object = sess.seq, sess.bucket, sess.name
	st.State = sess.state.String()
	st.DeclaredSize = sess.declared
	st.Persisted = sess.persisted
	st.Received = sess.received.Load()
	st.Generation = sess.result.Generation
	return st
}

var (
	errSessionExpired = errf(410, "gone", "The upload session has expired or was terminated.")
	errSessionUnknown = errf(404, "notFound", "No such upload session.")
	errCancelled      = errf(499, "clientClosedRequest", "The upload session was cancelled.")
	errSuperseded     = errf(503, "backendError", "fakegcs: a later request on this upload session superseded this one")
)
