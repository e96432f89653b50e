// Package state keeps unfinished transfers on disk, so that a later process
// can resume them: one [Record] per transfer in a [Store], a 0600 file
// written atomically in a 0700 directory. A record holds an upload's session
// URI, which is a credential for writing one object, so nothing read back is
// trusted until checked: the directory must be the user's alone ([Open]), a
// record a regular 0600 file the user owns ([Store.Load]), and a session is
// contacted only on the endpoint in use ([Store.Trusted], [CheckOrigin]).
package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"time"

	"github.com/gcsput/gcsput/resumable"
)

// MaxAge is how old a saved upload session may be and still be used. GCS
// keeps a resumable session for one week after it is started; half a day of
// margin means a resume never races the server's expiry.
const MaxAge = 156 * time.Hour // 6.5 days

// Kind says which way a saved transfer goes.
type Kind string

// The kinds of saved transfer.
const (
	KindUpload   Kind = "upload"
	KindDownload Kind = "download"
	// KindRewrite is a server-side copy (objects.rewrite) between two
	// gs:// locations.
	KindRewrite Kind = "rewrite"
	// KindMove is a move (package upload's Move) whose destination was
	// written and verified, and whose source's delete was sent but not
	// confirmed (its answer lost, and the source could not be read back).
	KindMove Kind = "move"
)

// recordVersion changes when Record's layout does; other versions are
// ignored (and started over), never misread.
const recordVersion = 1

// Record is one unfinished transfer saved in the state directory. It holds a
// session URI, which is a credential for writing one object: the files are
// created 0600 in a 0700 directory and a Record is never logged.
type Record struct {
	Version int  `json:"version"`
	Kind    Kind `json:"kind"`
	// Source and Dest are what the record is keyed on: for an upload the
	// absolute local path (or a description of a stream) and the gs:// URL;
	// for a download the gs:// URL and the absolute local path.
	Source string `json:"source"`
	Dest   string `json:"dest"`
	// Fingerprint is the local source file when the session started
	// (uploads only): a change means the bytes on the server are stale.
	Fingerprint Fingerprint `json:"fingerprint,omitzero"`
	// Shard is the worker's share ("I/N") that saved the transfer; a worker
	// of another share never resumes it.
	Shard string `json:"shard,omitempty"`
	// Created is when the transfer started (the session's age counts from
	// here); Updated when the record was last written.
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Size is the transfer's total size in bytes (-1 if unknown); Offset the
	// bytes known to be persisted (uploads) or written (downloads) at the
	// last save. They are for listing; resuming asks the server.
	Size   int64 `json:"size"`
	Offset int64 `json:"offset"`
	// Upload or Download holds what resuming needs.
	Upload   *Upload   `json:"upload,omitempty"`
	Download *Download `json:"download,omitempty"`
	Rewrite  *Rewrite  `json:"rewrite,omitempty"`
	Move     *Move     `json:"move,omitempty"`
	// Unfinishable, when set, is why a run found that the transfer can
	// never finish (its source gone): later resumes skip it without
	// failing, and Store.GC removes it (see [Record.Stuck]).
	Unfinishable string `json:"unfinishable,omitempty"`

	file string // the key it was loaded from; "" for a record not read from disk
}

// Move is what finishing a move whose source's delete is unconfirmed needs:
// what the destination holds, so that a later run that finds the source
// gone can tell the move is done, and the source generation to delete if it
// is still there.
type Move struct {
	// SourceGeneration is the source generation moved; CRC32C its CRC32C.
	SourceGeneration int64  `json:"source_generation"`
	CRC32C           uint32 `json:"crc32c"`
	// DestGeneration is the destination object's generation (a move to
	// gs://); 0 for a local file, which must have the record's Size.
	DestGeneration int64 `json:"dest_generation,omitempty"`
}

// Rewrite is what resuming a saved server-side copy needs: the token of its
// last call. The token continues a copy into the destination, a secret like
// a session URI: it is sent only to the endpoint it came from (see
// [Store.Trusted]).
type Rewrite struct {
	Token    string `json:"token"`
	Endpoint string `json:"endpoint"`
	// SourceGeneration and SourceCRC32C are the source generation being
	// copied: a token is used only while it is still the one to copy.
	SourceGeneration int64  `json:"source_generation"`
	SourceCRC32C     uint32 `json:"source_crc32c"`
	// Options are the copy's options as the caller encoded them (package
	// upload's CopyOptions).
	Options json.RawMessage `json:"options"`
	// Dest is what the destination must be, as the caller encoded it
	// (package upload's copyDest): its key's SHA256 or KMS key name, its
	// preconditions, storage class and metadata, saved whole so that a
	// resume writes the same object or none. Empty in records of older
	// versions.
	Dest json.RawMessage `json:"dest,omitempty"`
	// Move says the copy is the first step of a move (package upload's
	// Move): resuming it finishes the move, the source deleted once the
	// copy is verified.
	Move bool `json:"move,omitempty"`
}

// Upload is what resuming a saved upload needs besides the source file.
type Upload struct {
	// Session is the resumable session (URI, persisted offset, hash state).
	Session *resumable.Session `json:"session"`
	// Options are the upload's options as the caller encoded them (package
	// upload's UploadOptions), so a session that must start over (gone on
	// the server, source changed) is restarted with the same metadata and
	// preconditions. This package does not read them.
	Options json.RawMessage `json:"options"`
	// Components, when not empty, is a parallel composite upload: the
	// file goes up as these temporary objects, then one compose makes the
	// destination. Session is then nil. See [Component] and
	// [CheckComponents].
	Components []Component `json:"components,omitempty"`
	// Dest is the encryption the upload was started under (package
	// upload's, as the caller encoded it: the key's SHA256 or the Cloud KMS
	// key name), so that no run continues or starts it over under another;
	// empty in a record of an older gcsput.
	Dest json.RawMessage `json:"dest,omitempty"`
}

// Download is what resuming a saved download needs.
type Download struct {
	// Generation is the object generation being downloaded: a partial file
	// is continued only from the same generation.
	Generation int64 `json:"generation"`
	// Temp is the partial file beside the target.
	Temp string `json:"temp"`
	// Options are the download's options as the caller encoded them
	// (package upload's DownloadOptions).
	Options json.RawMessage `json:"options"`
	// Slices, when not empty, is the plan of a sliced download: the
	// temporary file has the object's size, and each slice continues from
	// its Done. Read from disk, it is checked (Slice.Check) before use.
	Slices []Slice `json:"slices,omitempty"`
}

// Slice is one ranged part of a sliced download: the object's bytes
// [Start, End), of which [Start, Done) are written.
type Slice struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	Done  int64 `json:"done"`
}

// CheckSlices reports whether slices cover an object of size bytes exactly,
// in order, each with Start <= Done <= End: a plan that can be continued.
// A record is untrusted input; anything else is refused.
func CheckSlices(slices []Slice, size int64) error {
	at := func(i int) (int64, int64) { return slices[i].Start, slices[i].End }
	if err := checkCover("slice", len(slices), at, size); err != nil {
		return err
	}
	for i, s := range slices {
		if s.Done < s.Start || s.Done > s.End {
			return fmt.Errorf("slice %d (%d-%d) is done to %d, outside it", i, s.Start, s.End, s.Done)
		}
	}
	return nil
}

// checkCover reports whether n ranges, at(i) = [start, end), each not
// empty, cover [0, size) exactly and in order: the plan of a sliced
// download or of a composite upload, read from an untrusted record.
func checkCover(what string, n int, at func(int) (start, end int64), size int64) error {
	next := int64(0)
	for i := range n {
		start, end := at(i)
		if start != next || end <= start {
			return fmt.Errorf("%s %d (%d-%d) does not continue the plan at %d", what, i, start, end, next)
		}
		next = end
	}
	if next != size || n == 0 {
		return fmt.Errorf("the %ss cover %d bytes of %d", what, next, size)
	}
	return nil
}

// Key returns the record's file key; see the function Key.
func (r *Record) Key() string { return Key(r.Kind, r.Source, r.Dest, r.Shard) }

// Key is the file key of the record for kind, source, dest and shard: a
// hash of all four, so the same file uploaded to two places has two
// sessions, two files uploaded to one object never share one (gsutil and
// gcloud key on the destination only), and neither do two shards.
func Key(kind Kind, source, dest, shard string) string {
	if shard != "" {
		source += "\x00shard " + shard
	}
	sum := sha256.Sum256([]byte(string(kind) + "\x00" + source + "\x00" + dest))
	return hex.EncodeToString(sum[:16])
}

// Fingerprint identifies a version of a local file cheaply, from what stat
// says: a rewrite or a replacement changes the size, the modification time,
// the inode or the device; an edit in place that restores size and mtime
// (dd conv=notrunc, then touch -r) still changes the status change time,
// which no unprivileged call can set back.
type Fingerprint struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`           // nanoseconds since the Unix epoch
	CTime   int64  `json:"ctime_ns,omitempty"` // status change time, where the OS has one
	Inode   uint64 `json:"inode,omitempty"`
	Device  uint64 `json:"dev,omitempty"`
}

// FingerprintOf returns the fingerprint of the file path, whose FileInfo
// (from os.Stat, following links) is fi.
func FingerprintOf(path string, fi fs.FileInfo) Fingerprint {
	f := Fingerprint{Path: path, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), CTime: changeTime(fi)}
	f.Device, f.Inode = fileID(fi)
	return f
}

// Change describes how g differs from f, or returns "" when they match.
func (f Fingerprint) Change(g Fingerprint) string {
	switch {
	case f.Path != g.Path:
		return "path changed"
	case f.Size != g.Size:
		return fmt.Sprintf("size changed from %d to %d bytes", f.Size, g.Size)
	case f.ModTime != g.ModTime:
		return "modification time changed"
	case f.Inode != g.Inode || f.Device != g.Device:
		return "file was replaced (inode changed)"
	case f.CTime != g.CTime:
		return "file was modified (status change time changed)"
	}
	return ""
}
