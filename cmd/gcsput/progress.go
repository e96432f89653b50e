package main

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/gcsput/gcsput/internal/ratewin"
	"github.com/gcsput/gcsput/upload"
)

// progress draws one bar for a whole command on stderr: bytes done of the total, rate, ETA
// and the file in flight. Lines logged while it is drawn (retries, warnings) go through
// printf, which clears the bar first so the two never garble each other.
//
// progressbar's Clear reads the bar's state without its lock, so every call on bar is
// made under mu.
type progress struct {
	mu     sync.Mutex
	w      io.Writer
	bar    *progressbar.ProgressBar // nil: no bar, printf just prints
	total  int64                    // bytes expected; -1 once a stream of unknown size joined
	sum    int64                    // bytes done over all files
	files  map[string]*fileProgress
	active map[string]bool // files started and not complete: the ones named on the bar
	shown  string          // description last set
	rate   ratewin.Window  // bytes per second over the last seconds
	now    func() time.Time
	nfiles int  // files expected (addTotal calls)
	ended  int  // files finished, whatever their outcome
	drawn  bool // the bar has been drawn: nothing is shown before there is something to show
	// lib is the library's BatchProgress, once it reported: the counts, rate, ETA, retries
	// and resumes on the bar are its; the fields above name the files in flight.
	lib    upload.BatchProgress
	hasLib bool
}

// fileProgress is one file's bytes done and size (-1 while unknown).
type fileProgress struct{ done, size int64 }

// newProgress starts a bar when show is true; otherwise the value only serializes printf.
func newProgress(w io.Writer, show bool) *progress {
	return newProgressEvery(w, show, 100*time.Millisecond)
}

// newProgressEvery is newProgress redrawing at most once per every; the docs' tests draw
// each state at once (0) to compare the line with the ones the docs show.
func newProgressEvery(w io.Writer, show bool, every time.Duration) *progress {
	p := &progress{w: w, files: map[string]*fileProgress{}, active: map[string]bool{}, now: time.Now}
	if !show {
		return p
	}
	p.bar = progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(w),
		// Counts, rate and ETA are ours (see status): the library's rate averages from
		// the first byte, when kernel buffers swallow megabytes at once.
		progressbar.OptionShowBytes(false),
		progressbar.OptionUseIECUnits(true),
		// A fixed width: with OptionFullWidth the bar shrank to "||" on a 60-column
		// terminal once the counts and the name took the rest.
		progressbar.OptionSetWidth(20),
		progressbar.OptionThrottle(every),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSpinnerType(14),
		// No spinner goroutine: it would render concurrently with Clear, and it only stops
		// when the bar is full, which a failed transfer never makes it.
		progressbar.OptionSetSpinnerChangeInterval(0),
		progressbar.OptionSetRenderBlankState(false),
	)
	return p
}

// addTotal grows the expected total by n bytes (a file was found); n < 0 means a stream of
// unknown size, which leaves the bar a spinner.
func (p *progress) addTotal(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nfiles++
	if n < 0 || p.total < 0 {
		p.total = -1
		return
	}
	p.total += n // the bar learns it at the next redraw: no half-known total on screen
}

// update records that file has done bytes of size (-1: unknown) acknowledged by the
// server (or written, for downloads). done may go down when the server persisted less
// than was sent. A file whose done reaches its size leaves the list of files in flight.
func (p *progress) update(file string, done, size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.files[file]
	if f == nil {
		f = &fileProgress{size: -1}
		p.files[file] = f
	}
	p.sum += done - f.done
	f.done = done
	if size >= 0 {
		f.size = size
	}
	if f.size >= 0 && f.done >= f.size {
		delete(p.active, file)
	} else {
		p.active[file] = true
	}
	p.redraw()
}

// end marks file finished. A file that succeeded (or was skipped) counts all its bytes,
// so the bar reaches its total; a failed one keeps what it did and leaves the list.
func (p *progress) end(file string, size int64, ok bool) {
	p.mu.Lock()
	p.ended++
	p.mu.Unlock()
	if ok {
		size = max(size, 0)
		p.update(file, size, size)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.active, file)
	delete(p.files, file) // its bytes are in sum; a million-file run keeps no entry per file
	p.redraw()
}

// redraw sets the bar from the counters; called with mu held.
func (p *progress) redraw() {
	if p.bar == nil {
		return
	}
	names := make([]string, 0, len(p.active))
	for name := range p.active {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) == 0 && p.sum == 0 {
		return // nothing has moved yet: no frame, not even a spinner
	}
	desc := "done"
	switch len(names) {
	case 0:
	case 1:
		desc = shorten(escapeText(names[0]), 28)
	default:
		desc = fmt.Sprintf("%s (+%d)", shorten(escapeText(names[0]), 24), len(names)-1)
	}
	ended, nfiles, total, sum := p.ended, p.nfiles, p.total, p.sum
	status := ""
	if p.hasLib {
		ended, nfiles, total, sum = p.lib.FilesDone, p.lib.Files, p.lib.Bytes, p.lib.BytesDone
		status = batchStatus(p.lib)
	} else {
		status = p.status()
	}
	if nfiles > 1 {
		desc = fmt.Sprintf("%d/%d files %s", ended, nfiles, desc)
	}
	desc = status + " " + desc
	if desc != p.shown {
		p.shown = desc
		p.bar.Describe(desc)
	}
	p.drawn = true
	if total > 0 && p.bar.GetMax64() != total {
		p.bar.ChangeMax64(total)
	}
	if total > 0 && sum > total {
		sum = total
	}
	_ = p.bar.Set64(sum)
}

// status is "12.0 MiB/256.0 MiB 8.0 MiB/s ETA 30s": bytes done of the total, the rate over a
// moving window, and the time left at that rate; called with mu held.
func (p *progress) status() string {
	p.rate.Add(p.now(), p.sum)
	s := formatSize(p.sum)
	if p.total > 0 {
		s += "/" + formatSize(p.total)
	}
	if r := p.rate.PerSecond(); r > 0 {
		s += " " + formatSize(int64(r)) + "/s"
		if p.total > 0 && p.total > p.sum {
			s += " ETA " + (time.Duration(float64(p.total-p.sum)/r) * time.Second).Round(time.Second).String()
		}
	}
	return s
}

// batch is upload's BatchProgress callback: the totals the bar shows.
func (p *progress) batch(b upload.BatchProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lib, p.hasLib = b, true
	if b.Current.Size != 0 || b.Current.Done != 0 || b.Retries+b.Resumes > 0 {
		p.redraw() // the per-file callback redraws for progress; this one for retries
	}
}

// library is the library's last BatchProgress (zero when it never reported).
func (p *progress) library() upload.BatchProgress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lib
}

// ran is the time transfers ran, for the summary's rate: 0 when the library never said.
func (p *progress) ran() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lib.Elapsed
}

// batchStatus is the bar's counts: "12.0 MiB/256.0 MiB 8.0 MiB/s ETA 30s, 2 retries,
// 1 resumed, 2 refused, 5 at once": bytes done of the total known, the rate over the time
// transfers ran, the time left at that rate, the retries and resumes so far, and the
// requests the bucket refused with the requests its window lets go at once (when there
// were any of each).
func batchStatus(b upload.BatchProgress) string {
	s := formatSize(b.BytesDone)
	if b.Bytes > 0 {
		s += "/" + formatSize(b.Bytes)
	}
	if b.Rate > 0 {
		s += " " + formatSize(int64(b.Rate)) + "/s"
	}
	if b.ETA > 0 && b.Bytes > b.BytesDone {
		s += " ETA " + max(b.ETA, time.Second).Round(time.Second).String()
	}
	switch {
	case b.Retries == 1:
		s += ", 1 retry"
	case b.Retries > 1:
		s += fmt.Sprintf(", %d retries", b.Retries)
	}
	if b.Resumes > 0 {
		s += fmt.Sprintf(", %d resumed", b.Resumes)
	}
	if b.Refusals > 0 {
		// The bucket refused some (429/503): how many, and how many requests go at once now.
		s += fmt.Sprintf(", %d refused, %d at once", b.Refusals, b.Concurrency)
	}
	return s
}

// printf writes a line on stderr above the bar.
func (p *progress) printf(format string, args ...any) {
	p.above(func() { fmt.Fprintf(p.w, format, args...) })
}

// above runs write with the bar erased, then draws the bar again below what was written.
// Writes to stdout go through it too, since on a terminal both streams share the screen.
func (p *progress) above(write func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	write()
	if p.bar != nil && p.drawn {
		_ = p.bar.RenderBlank()
	}
}

// close finishes the bar and leaves the cursor on a fresh line.
func (p *progress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		return
	}
	_ = p.bar.Clear()
	_ = p.bar.Exit()
	p.bar = nil
}

// shorten keeps the end of a long name, where the file name is: "…/2024/05/img_0042.jpg".
func shorten(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return "…" + string(r[len(r)-max+1:])
}
