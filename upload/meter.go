package upload

import (
	"sync"
	"time"

	"github.com/gcsput/gcsput/internal/aimd"
	"github.com/gcsput/gcsput/resumable"
)

// BatchProgress is the progress of everything a Client transfers, given to
// Options.BatchProgress each time a transfer moves, starts or ends: the
// totals of a whole batch (or of every call, when a Client runs several,
// until [Client.ResetProgress] starts them again), as they are known so far. Totals grow as a walk or a listing finds files
// (UploadSeq learns each item as it pulls it, a transfer its size when it
// opens the file or gets the first response); [Client.Expect] adds what a
// caller knows ahead.
type BatchProgress struct {
	// Files is the number of files known so far; FilesDone how many have
	// ended, whatever their outcome (skipped and failed included).
	Files, FilesDone int
	// Bytes is the bytes of the files known so far (-1 once a stream of
	// unknown size joined); BytesDone how many of them are done: sent and
	// acknowledged, written, or skipped as already there. A failed
	// transfer's unsent bytes leave Bytes (an interrupted one's stay).
	Bytes, BytesDone int64
	// Elapsed is the time during which at least one transfer ran (waits
	// between calls, and the time after an interruption, are not counted);
	// Rate is the bytes moved in this run per second over Elapsed (skipped
	// files count no bytes): 0 until a byte moved.
	Elapsed time.Duration
	Rate    float64
	// ETA is the time left at Rate for the bytes not done; -1 while
	// unknown (no rate yet, or an unknown total).
	ETA time.Duration
	// Retries counts the requests retried, Resumes the transfers (or
	// parts) continued from where the server or the file was, after a
	// break or from a saved session.
	Retries, Resumes int
	// Concurrency is the requests the Client lets be in flight now to the
	// bucket that holds it back most: the smallest window of the buckets
	// it sent to, from 1 up to Parallelism (see Options.Parallelism); 0
	// before the first request. Refusals counts the requests the buckets
	// refused for their load or one object's rate (429, 503), each retried
	// after its own backoff; LeastConcurrency is the smallest window so far.
	Concurrency, LeastConcurrency, Refusals int
	// Current is the transfer this report is about (its Size -1 while
	// unknown); zero for a report of a file counted or ended.
	Current Progress
}

// countedKey marks the context of a batch whose files the meter already
// counted (UploadDir, DownloadPrefix), so forEach does not count them again.
type countedKey struct{}

// meter adds up the progress of a Client's transfers. Its methods are
// called from the workers, concurrently; it reports under its lock, so
// reports arrive one at a time and in order.
type meter struct {
	mu     sync.Mutex
	now    func() time.Time
	report func(BatchProgress) // nil: nothing is measured
	b      BatchProgress
	ahead  int   // files counted before they started (Expect, a batch's list)
	aheadB int64 // their bytes, as far as known
	moved  int64 // bytes moved in this run: the Rate's numerator
	active int   // transfers running now
	since  time.Time
	ran    time.Duration // time with active > 0, up to since
	live   map[*Result]*metered
	// windows are the Client's buckets' windows, read at each report.
	windows *aimd.Buckets
}

// metered is one running transfer: its bytes done and its size once known.
type metered struct {
	done, size int64
	sized      bool
}

func newMeter(report func(BatchProgress), now func() time.Time) *meter {
	return &meter{report: report, now: now, live: map[*Result]*metered{}}
}

// expect counts files and bytes before they start.
func (m *meter) expect(files int, bytes int64) {
	if m.report == nil || files <= 0 && bytes <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ahead += max(files, 0)
	m.aheadB += max(bytes, 0)
	m.b.Files += max(files, 0)
	m.b.Bytes += max(bytes, 0)
	m.emit(Progress{})
}

// unexpect takes back files and bytes that expect counted for a batch
// that did not start (see upCount.abandon).
func (m *meter) unexpect(files int, bytes int64) {
	if m.report == nil || files <= 0 && bytes <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ahead, m.aheadB = max(m.ahead-files, 0), max(m.aheadB-bytes, 0)
	m.b.Files = max(m.b.Files-files, 0)
	if m.b.Bytes >= 0 { // -1: a stream of unknown size is in the totals
		m.b.Bytes = max(m.b.Bytes-bytes, 0)
	}
	m.emit(Progress{})
}

// announce counts the files (and bytes) a batch is about to transfer,
// beyond what Expect already counted ahead: a caller that counted its walk
// and then hands it over is not counted twice.
func (m *meter) announce(files int, bytes int64) {
	if m.report == nil {
		return
	}
	m.mu.Lock()
	more, moreB := max(files-m.ahead, 0), max(bytes-m.aheadB, 0)
	m.mu.Unlock()
	m.expect(more, moreB)
}

// pulled counts an item a stream yielded, unless Expect counted it ahead.
func (m *meter) pulled() { m.announce(1, 0) }

// count takes one file from those expected, or counts it; with mu held.
func (m *meter) count() {
	if m.ahead > 0 {
		m.ahead--
	} else {
		m.b.Files++
	}
}

// sized learns a transfer's size, taking it from the bytes expected.
func (m *meter) sized(t *metered, size int64) {
	if t.sized || size < 0 {
		return
	}
	t.size, t.sized = size, true
	taken := min(size, m.aheadB)
	m.aheadB -= taken
	m.b.Bytes += size - taken
}

// update records that r has done bytes of size (-1: unknown); the first
// report of r starts it.
func (m *meter) update(r *Result, done, size int64) {
	if m.report == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.live[r]
	if t == nil {
		t = &metered{}
		m.live[r] = t
		m.count()
		if m.active == 0 {
			m.since = m.now()
		}
		m.active++
	}
	m.sized(t, size)
	m.b.BytesDone += done - t.done
	m.moved += max(done-t.done, 0)
	t.done = done
	m.emit(Progress{Source: r.Source, Dest: r.Dest, Done: done, Size: size})
}

// end records that r ended: a transfer that succeeded (or was skipped)
// counts all its bytes done; a failed one's unsent bytes leave the total
// (an interrupted one's stay: a rerun sends them).
func (m *meter) end(r *Result) {
	if m.report == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.live[r]
	if t == nil {
		t = &metered{} // it ended before it moved: skipped, or failed early
		m.count()
	} else if m.active--; m.active == 0 {
		m.ran += m.now().Sub(m.since)
	}
	delete(m.live, r)
	m.b.FilesDone++
	if r.OK() {
		m.sized(t, r.Size)
		if t.sized && t.size > t.done {
			m.b.BytesDone += t.size - t.done
		}
	} else if r.Status == StatusFailed && t.sized && t.size > t.done {
		m.b.Bytes -= t.size - t.done // an interrupted one's are still to do
	}
	m.emit(Progress{})
}

// event counts retries and resumes.
func (m *meter) event(e resumable.Event) {
	if m.report == nil || e.Kind != resumable.EventRetry && e.Kind != resumable.EventResumed {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.Kind == resumable.EventRetry {
		m.b.Retries++
	} else {
		m.b.Resumes++
	}
	m.emit(Progress{})
}

// refused reports a refusal the windows counted.
func (m *meter) refused() {
	if m.report == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.emit(Progress{})
}

// concurrency fills in b's windows and refusals.
func (m *meter) concurrency(b *BatchProgress) {
	if m.windows == nil {
		return
	}
	for _, s := range m.windows.Stats() {
		if b.Concurrency == 0 || s.Window < b.Concurrency {
			b.Concurrency = s.Window
		}
		if b.LeastConcurrency == 0 || s.Least < b.LeastConcurrency {
			b.LeastConcurrency = s.Least
		}
		b.Refusals += s.Refusals + s.ObjectRefusals
	}
}

// emit reports the totals, with the time and rate as of now; mu held.
func (m *meter) emit(cur Progress) {
	b := m.b
	b.Elapsed = m.ran
	if m.active > 0 {
		b.Elapsed += m.now().Sub(m.since)
	}
	b.ETA = -1
	if s := b.Elapsed.Seconds(); s > 0 && m.moved > 0 {
		b.Rate = float64(m.moved) / s
		if left := b.Bytes - b.BytesDone; left >= 0 {
			b.ETA = time.Duration(float64(left) / b.Rate * float64(time.Second))
		}
	}
	b.Current = cur
	m.concurrency(&b)
	m.report(b)
}

// Expect adds files, and their bytes, to the totals of BatchProgress ahead
// of the transfers that will move them: for a caller that counts a walk
// before it streams it to UploadSeq, so that the ETA covers the whole job
// from the first byte. The transfers then take their share of it rather
// than adding to the totals. It does nothing without Options.BatchProgress.
func (c *Client) Expect(files int, bytes int64) { c.meter.expect(files, bytes) }

// reset starts the totals again from the transfers running now.
func (m *meter) reset() {
	if m.report == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.b = BatchProgress{}
	m.ahead, m.aheadB, m.moved, m.ran = 0, 0, 0, 0
	m.since = m.now()
	for _, t := range m.live {
		m.b.Files++
		m.b.BytesDone += t.done
		if t.sized {
			m.b.Bytes += t.size
		}
	}
	m.emit(Progress{})
}

// ResetProgress starts the totals of Options.BatchProgress again, from the
// transfers running now (none, between batches): the totals are the
// Client's whole life otherwise, so a batch that follows an interrupted one
// (whose unsent bytes stay counted, for a rerun to send) or any other batch
// would report them too. Call it before a batch to have that batch's totals
// alone. It does nothing without Options.BatchProgress.
func (c *Client) ResetProgress() { c.meter.reset() }
