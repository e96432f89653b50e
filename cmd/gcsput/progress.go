package main

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress draws one bar for a whole command on stderr: bytes done of the total, rate, ETA
// and the file in flight. Lines logged while it is drawn (retries, warnings) go through
// printf, which clears the bar first so the two never garble each other.
//
// progressbar's Clear reads the bar's state without its lock, so every call on bar is
// made under mu.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	bar      *progressbar.ProgressBar // nil: no bar, printf just prints
	total    int64                    // bytes expected; -1 while unknown (streams)
	done     map[string]int64         // bytes acknowledged per file in flight
	finished int64                    // bytes of files that ended
	shown    string                   // description last set
}

// newProgress starts a bar when show is true; otherwise the value only serializes printf.
func newProgress(w io.Writer, show bool) *progress {
	p := &progress{w: w, done: map[string]int64{}, total: 0}
	if !show {
		return p
	}
	p.bar = progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(), // "12/256 MiB" next to the rate
		progressbar.OptionUseIECUnits(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionFullWidth(),
		progressbar.OptionSpinnerType(14),
		// No spinner goroutine: it would render concurrently with Clear, and it only stops
		// when the bar is full, which a failed transfer never makes it.
		progressbar.OptionSetSpinnerChangeInterval(0),
		progressbar.OptionSetDescription("starting"),
	)
	return p
}

// addTotal grows the expected total by n bytes (a file was found); n < 0 means a stream of
// unknown size, which leaves the bar a spinner.
func (p *progress) addTotal(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n < 0 || p.total < 0 {
		p.total = -1
		return
	}
	p.total += n
	if p.bar != nil && p.total > 0 {
		p.bar.ChangeMax64(p.total)
	}
}

// update records that file has bytes acknowledged by the server (or written, for
// downloads). The count may go down when the server persisted less than was sent.
func (p *progress) update(file string, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done[file] = bytes
	p.redraw()
}

// end marks file finished (or failed) with its final byte count.
func (p *progress) end(file string, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.done, file)
	p.finished += bytes
	p.redraw()
}

// redraw sets the bar from the counters; called with mu held.
func (p *progress) redraw() {
	if p.bar == nil {
		return
	}
	sum := p.finished
	names := make([]string, 0, len(p.done))
	for name, n := range p.done {
		sum += n
		names = append(names, name)
	}
	sort.Strings(names)
	desc := "done"
	switch len(names) {
	case 0:
	case 1:
		desc = names[0]
	default:
		desc = fmt.Sprintf("%s (+%d more)", names[0], len(names)-1)
	}
	if desc != p.shown {
		p.shown = desc
		p.bar.Describe(shorten(desc, 40))
	}
	if p.total > 0 && sum > p.total {
		sum = p.total
	}
	_ = p.bar.Set64(sum)
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
	if p.bar != nil {
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
