package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gcsput/gcsput/internal/jobrec"
)

// fileRecord is one transfer's outcome, and summaryRecord the last --json line of a
// transfer command: their field names are a promise to scripts (internal/jobrec).
type (
	fileRecord    = jobrec.File
	summaryRecord = jobrec.Summary
)

// reporter prints records as transfers end and keeps the counts for the summary.
// Successes go to stdout (one line, or one JSON object, per file); failures go to stderr
// with the cause, and into --json too so a script sees every file.
type reporter struct {
	mu      sync.Mutex
	stdout  io.Writer
	prog    *progress // stderr, shared with the bar
	json    bool
	quiet   bool
	start   time.Time
	sum     summaryRecord
	saved   int // interrupted transfers whose state is saved
	encoder *json.Encoder
}

func newReporter(stdout io.Writer, prog *progress, asJSON, quiet bool, start time.Time) *reporter {
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	return &reporter{stdout: stdout, prog: prog, json: asJSON, quiet: quiet, start: start,
		sum: summaryRecord{Type: "summary"}, encoder: enc}
}

// add records one finished transfer.
func (r *reporter) add(rec fileRecord) { r.addRecord(rec, true) }

// addQuietly records a failure that was already said for the batch (upload.ErrBatchStopped): counted,
// and in --json, but not printed on stderr again.
func (r *reporter) addQuietly(rec fileRecord) { r.addRecord(rec, false) }

func (r *reporter) addRecord(rec fileRecord, printFailure bool) {
	rec.Type = "file"
	rec.Error = redact(rec.Error)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count(rec)
	switch {
	case r.json:
		_ = r.encoder.Encode(rec)
	case rec.Status == "failed" || rec.Status == "interrupted":
		// stderr: the user must see it even when stdout goes to a file.
	case !r.quiet:
		r.prog.above(func() { fmt.Fprintln(r.stdout, textLine(rec)) })
	}
	if rec.Status == "failed" && printFailure {
		r.prog.printf("gcsput: failed: %s -> %s: %s\n", escapeText(rec.Source), escapeText(rec.Destination), escapeText(rec.Error))
	}
	if rec.NotResumable() {
		r.prog.printf("gcsput: not resumable: %s -> %s: its state could not be saved (%s); run again, it starts over\n",
			escapeText(rec.Source), escapeText(rec.Destination), escapeText(rec.SaveError))
	}
}

// warningRecord is a warning as --json prints it, the moment it happens: a process killed
// later leaves it in the output.
type warningRecord struct {
	Type    string `json:"type"` // always "warning"
	Message string `json:"message"`
}

// warn prints a warning of the library or the command: on stderr, and with --json as a
// warning record on stdout too.
func (r *reporter) warn(msg string) {
	r.prog.printf("gcsput: warning: %s\n", escapeText(msg))
	if !r.json {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.encoder.Encode(warningRecord{Type: "warning", Message: redact(msg)})
}

// count adds rec to the summary, and to the saved ones the exit message names.
func (r *reporter) count(rec fileRecord) {
	r.sum.Add(rec)
	if rec.Status == "interrupted" && rec.Saved {
		r.saved++
	}
}

// textLine is the human- and grep-friendly form: status, size, source -> destination.
func textLine(rec fileRecord) string {
	s := fmt.Sprintf("%-10s %10s  %s -> %s", rec.Status, formatSize(rec.Bytes), escapeText(rec.Source), escapeText(rec.Destination))
	switch {
	case rec.Reason != "":
		s += " (" + escapeText(rec.Reason) + ")"
	case rec.Status == "resumed":
		s += fmt.Sprintf(" (from %s)", formatSize(rec.ResumedFrom))
	}
	return s
}

// finish prints the summary (a JSON line, or a sentence on stderr) and returns the error
// that decides the exit code: nil, errInterrupted wrapped, or a *failedError.
func (r *reporter) finish(now time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sum.Seconds = now.Sub(r.start).Seconds()
	if r.json {
		_ = r.encoder.Encode(r.sum)
	} else if !r.quiet || r.sum.Failed > 0 {
		r.prog.printf("%s\n", summaryLine(r.sum))
	}
	if n := r.sum.DeletesWithheld; n > 0 && !r.json {
		r.prog.printf("gcsput: sync --delete withheld %s (%s): deletes run only after a sync without failures; "+
			"run it again once nothing fails\n", plural(n, "delete"), r.sum.WithheldBecause)
	}
	switch {
	case r.sum.Interrupted > 0:
		// Interrupted outranks failed: the failures may be the cancellation's doing.
		return &interruptedError{interrupted: r.sum.Interrupted, saved: r.saved, total: r.sum.Files}
	case r.sum.Failed > 0:
		return &failedError{failed: r.sum.Failed, total: r.sum.Files}
	}
	return nil
}

// ran records the time transfers ran, which the summary's rate is over.
func (r *reporter) ran(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sum.TransferSeconds = d.Seconds()
}

// concurrency records the buckets' windows and refusals of the run.
func (r *reporter) concurrency(window, least, refusals int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sum.Concurrency, r.sum.LeastConcurrency, r.sum.Refusals = window, least, refusals
}

// withhold records that n planned deletes were not made, and why.
func (r *reporter) withhold(n int, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sum.DeletesWithheld, r.sum.WithheldBecause = n, why
}

// summaryLine: "12 files: 9 uploaded, 1 resumed, 2 skipped, 0 failed; 48.0 MiB in 3.2s (15.0 MiB/s)".
func summaryLine(s summaryRecord) string {
	line := fmt.Sprintf("%s: ", plural(s.Files, "file"))
	parts := []struct {
		n    int
		word string
	}{{s.Uploaded, "uploaded"}, {s.Resumed, "resumed"}, {s.Restarted, "restarted"}, {s.Downloaded, "downloaded"},
		{s.Moved, "moved"}, {s.Copied, "copied"}, {s.Skipped, "skipped"}, {s.Deleted, "deleted"}, {s.Failed, "failed"}, {s.Interrupted, "interrupted"}}
	first := true
	for _, p := range parts {
		if p.n == 0 && p.word != "failed" {
			continue
		}
		if !first {
			line += ", "
		}
		first = false
		line += fmt.Sprintf("%d %s", p.n, p.word)
	}
	if s.DeletesWithheld > 0 {
		line += fmt.Sprintf(", %s withheld", plural(s.DeletesWithheld, "delete"))
	}
	line += fmt.Sprintf("; %s in %.1fs", formatSize(s.Bytes), s.Seconds)
	over := s.TransferSeconds
	if over <= 0 || over > s.Seconds {
		over = s.Seconds
	}
	if over > 0 && s.Bytes > 0 {
		line += fmt.Sprintf(" (%s/s)", formatSize(int64(float64(s.Bytes)/over)))
	}
	if s.NotResumable > 0 {
		line += fmt.Sprintf("; %d not resumable (state not saved)", s.NotResumable)
	}
	if s.Interrupted > 0 {
		// The files cut short count for nothing above, but their bytes moved (and the
		// saved ones keep them): say how many.
		line += fmt.Sprintf("; %s transferred", formatSize(s.Transferred))
	}
	return line
}
