package upload

import (
	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// emitter returns the function that forwards one object's events to
// Options.OnEvent.
func (c *Client) emitter(dst URL) func(resumable.Event) {
	return func(e resumable.Event) {
		e.Bucket, e.Object = dst.Bucket, dst.Object
		c.event(e)
	}
}

// event counts e into BatchProgress and gives it to Options.OnEvent.
func (c *Client) event(e resumable.Event) {
	c.meter.event(e)
	if c.opts.OnEvent != nil {
		c.opts.OnEvent(e)
	}
}

// progress reports one transfer's progress to Options.Progress.
func (c *Client) progress(r *Result, done, size int64) {
	if c.opts.Progress != nil {
		src := r.Source
		if orig, ok := c.shown.Load(src); ok {
			src = orig.(string)
		}
		c.opts.Progress(Progress{Source: src, Dest: r.Dest, Done: done, Size: size})
	}
	c.meter.update(r, done, size)
}

// tracker follows one resumable transfer's events: it counts retries and
// the bytes sent or received into the Result, reports progress, and saves
// the transfer's
// Record whenever the server's offset (or the bytes written) moves, so a
// process killed at any moment leaves a record no older than one chunk.
// resumable delivers one transfer's events one at a time, so no locking is
// needed.
type tracker struct {
	c    *Client
	r    *Result
	rec  *state.Record // nil: nothing to save
	emit func(resumable.Event)
	// resuming: a saved session or partial file is being continued; the
	// first EventResumed gives Result.ResumedFrom.
	resuming bool
	// claim, when set, is taken before the first save (see claim); the
	// transfer releases it.
	claim *claim
}

func (c *Client) newTracker(r *Result, dst URL) *tracker {
	return &tracker{c: c, r: r, emit: c.emitter(dst)}
}

func (t *tracker) onEvent(e resumable.Event) {
	switch e.Kind {
	case resumable.EventRetry:
		t.r.Attempts++
	case resumable.EventSent:
		// Bytes on the wire, also of attempts that failed: Result.Transferred
		// and the progress within a chunk, before the server acknowledges it.
		t.r.Transferred += e.Length
		t.c.progress(t.r, e.Offset, e.Size)
	case resumable.EventProgress:
		t.r.Transferred += e.Length
	case resumable.EventRewrite:
		// Bytes the server copied in this run (a copy's record is saved by
		// its checkpoint, which holds the token).
		t.r.Transferred += e.Length
		t.c.progress(t.r, e.Persisted, e.Size)
	case resumable.EventChunk:
		t.moved(e.Persisted, e.Size)
	case resumable.EventStatus:
		t.moved(e.Persisted, e.Size)
	case resumable.EventResumed:
		if t.resuming {
			t.r.ResumedFrom, t.resuming = e.Offset, false
		}
		t.moved(e.Offset, e.Size)
	}
	t.emit(e)
}

// moved records a new offset: progress, and the saved record.
func (t *tracker) moved(off, size int64) {
	t.c.progress(t.r, off, size)
	if t.rec == nil || t.c.store == nil || off == t.rec.Offset {
		return
	}
	t.rec.Offset = off
	t.save()
}

// save writes the record; a failure only costs the ability to resume in
// another process, so it is reported (see saveFailed), not fatal.
func (t *tracker) save() {
	if t.rec == nil || t.c.store == nil {
		return
	}
	err := t.claim.take()
	if err == nil {
		err = t.c.store.Save(t.rec)
	}
	if err != nil {
		t.c.saveFailed(t.r, err)
	}
	t.r.Saved = t.r.Saved || err == nil
}

// forget removes the record once it is of no further use.
func (t *tracker) forget() {
	if t.rec != nil && t.c.store != nil {
		t.c.store.Remove(t.rec.Key())
	}
	t.rec, t.r.Saved = nil, false
}
