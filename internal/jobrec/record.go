// Package jobrec holds the records of a gcsput transfer job that outlive
// it: one File per finished action, the Summary counted from them, the
// Identity that names the job, and the merge of several workers' --json
// outputs into one verdict (Merge). The JSON field names are a promise to
// scripts: add fields, never rename them. Printing is the command's.
package jobrec

import (
	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

// File is one transfer's outcome: a line of text or one --json object on stdout.
type File struct {
	Type        string  `json:"type"`                   // always "file"
	Op          string  `json:"op"`                     // "upload", "download", "move" or "copy" (gs:// to gs://, on the server)
	Source      string  `json:"source"`                 // local path, "-", or gs://bucket/object
	Destination string  `json:"destination"`            // gs://bucket/object, local path, or "-"
	Status      string  `json:"status"`                 // uploaded, resumed, restarted, downloaded, moved, copied, skipped, failed, interrupted
	Reason      string  `json:"reason,omitempty"`       // why skipped, or why a saved session was not used (the upload started over)
	Bytes       int64   `json:"bytes"`                  // size of the object or file
	Transferred int64   `json:"transferred"`            // bytes sent or received in this run (0 when skipped, and for a copy)
	Rewritten   int64   `json:"rewritten,omitempty"`    // a copy: bytes the server rewrote since it started or resumed_from
	Generation  int64   `json:"generation,omitempty"`   // object generation written or read
	CRC32C      string  `json:"crc32c,omitempty"`       // base64, as GCS shows it
	Attempts    int     `json:"attempts,omitempty"`     // requests that failed and were retried, plus one
	ResumedFrom int64   `json:"resumed_from,omitempty"` // offset a saved session continued from
	Saved       bool    `json:"saved,omitempty"`        // interrupted with its state saved: 'gcsput resume' continues it
	SaveError   string  `json:"save_error,omitempty"`   // its state could not be saved (full or read-only state directory)
	Seconds     float64 `json:"seconds"`                // wall time of this transfer
	Error       string  `json:"error,omitempty"`        // the cause, for failed and interrupted
	Shard       string  `json:"shard,omitempty"`        // --shard I/N: the worker's share
}

// Of turns a library result into its record. SaveError is the error's
// text as it is: the caller redacts what it prints.
func Of(r *upload.Result) File {
	rec := File{
		Type: "file", Op: "upload", Source: r.Source, Destination: r.Dest, Status: string(r.Status), Reason: r.Note,
		Bytes: r.Size, Transferred: r.Transferred, Generation: r.Generation, Attempts: r.Attempts,
		ResumedFrom: r.ResumedFrom, Seconds: r.Elapsed.Seconds(), Saved: r.Saved && r.Status == upload.StatusInterrupted,
	}
	switch {
	case r.Source == "": // sync --delete's deletion
		rec.Op = "delete"
	case naming.IsRemote(r.Source) && naming.IsRemote(r.Dest):
		// The server copied: no byte crossed this machine's network.
		rec.Op, rec.Rewritten, rec.Transferred = "copy", r.Transferred, 0
	case naming.IsRemote(r.Source):
		rec.Op = "download"
	}
	if rec.Bytes < 0 {
		rec.Bytes = r.Transferred
	}
	if r.OK() && r.Status != upload.StatusSkipped && r.Status != upload.StatusDeleted || r.CRC32C != 0 {
		rec.CRC32C = resumable.EncodeCRC32C(r.CRC32C)
	}
	if r.Err != nil {
		rec.Error = r.Err.Error()
	}
	if r.SaveErr != nil {
		rec.SaveError = r.SaveErr.Error()
	}
	return rec
}

// NotResumable reports whether f was cut short and nothing of it is saved
// because saving failed.
func (f File) NotResumable() bool {
	return f.SaveError != "" && !f.Saved && (f.Status == "failed" || f.Status == "interrupted")
}
