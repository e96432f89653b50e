package jobrec

// Summary is the last --json line of a transfer command.
type Summary struct {
	Type  string `json:"type"`            // always "summary"
	Shard string `json:"shard,omitempty"` // --shard I/N: this summary is one worker's
	// Job names the job (cp and sync): report merges only one job's outputs.
	Job         *Identity `json:"job,omitempty"`
	Files       int       `json:"files"`
	Uploaded    int       `json:"uploaded"`
	Resumed     int       `json:"resumed"`
	Restarted   int       `json:"restarted"` // succeeded after starting over (session gone, source changed)
	Downloaded  int       `json:"downloaded"`
	Moved       int       `json:"moved,omitempty"` // mv: copied, verified, source removed
	Copied      int       `json:"copied"`          // copied between gs:// locations (on the server)
	Skipped     int       `json:"skipped"`
	Failed      int       `json:"failed"`
	Interrupted int       `json:"interrupted"`
	Deleted     int       `json:"deleted"`             // sync --delete: destination entries removed
	Bytes       int64     `json:"bytes"`               // size of the files uploaded or downloaded (not skipped)
	Transferred int64     `json:"transferred"`         // bytes that went over the network, re-sent chunks included
	Rewritten   int64     `json:"rewritten,omitempty"` // bytes the server rewrote for copies in this run
	Seconds     float64   `json:"seconds"`
	// TransferSeconds is the time during which transfers ran (not the planning before,
	// nor the saving after an interrupt): the rate is Bytes over it.
	TransferSeconds float64 `json:"transfer_seconds,omitempty"`

	// DeletesWithheld are the deletes sync --delete planned and did not make because
	// something failed or was interrupted; WithheldBecause says which. Absent when none.
	DeletesWithheld int    `json:"deletes_withheld,omitempty"`
	WithheldBecause string `json:"withheld_because,omitempty"`

	// Concurrency is the requests the bucket's window let be in flight at the end (at most
	// -j; see upload.Options.Parallelism), LeastConcurrency the fewest it let during the run,
	// Refusals the requests the bucket refused (429, 503), each sent again after its own
	// backoff. Absent when no request was made, or none refused.
	Concurrency      int `json:"concurrency,omitempty"`
	LeastConcurrency int `json:"least_concurrency,omitempty"`
	Refusals         int `json:"refusals,omitempty"`

	// NotResumable counts the transfers cut short (failed or interrupted) whose state could
	// not be saved: run again, they start over.
	NotResumable int `json:"not_resumable,omitempty"`
}

// Add counts one finished action. A status it does not know counts as failed.
func (s *Summary) Add(f File) {
	s.Files++
	if f.NotResumable() {
		s.NotResumable++
	}
	switch f.Status {
	case "uploaded":
		s.Uploaded++
	case "resumed":
		s.Resumed++
	case "restarted":
		s.Restarted++
	case "downloaded":
		s.Downloaded++
	case "moved":
		s.Moved++
	case "copied":
		s.Copied++
	case "skipped":
		s.Skipped++
	case "deleted":
		s.Deleted++
	case "interrupted":
		s.Interrupted++
	default:
		s.Failed++
	}
	if f.Status != "skipped" && f.Status != "failed" && f.Status != "interrupted" && f.Status != "deleted" {
		s.Bytes += f.Bytes
	}
	s.Transferred += f.Transferred
	s.Rewritten += f.Rewritten
}
