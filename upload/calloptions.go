package upload

import "fmt"

// UploadOptions are the per-call choices of an upload.
type UploadOptions struct {
	// Attrs is the metadata to set; see Attrs for the defaults.
	Attrs Attrs `json:"attrs,omitzero"`
	// NoClobber never overwrites: the upload carries ifGenerationMatch=0, and
	// an existing object makes the result "skipped" (not failed), as
	// gsutil's and gcloud's --no-clobber do and as CopyOptions.NoClobber.
	// (Its saved name stays "if_absent", the field's name before.)
	NoClobber bool `json:"if_absent,omitempty"`
	// IfGenerationMatch, when not nil, writes the object only if its live
	// generation is *IfGenerationMatch (ifGenerationMatch), as in
	// CopyOptions and the JSON API: a pointer to 0 means only if no live
	// object exists (the official client's Conditions{DoesNotExist: true}).
	// Otherwise the upload fails with a precondition error and nothing is
	// written; unlike NoClobber, an existing object is a failure, not
	// "skipped". nil: no condition. (A record saved when this field was an
	// int64 with 0 for none decodes the same: its 0 was never written.)
	IfGenerationMatch *int64 `json:"if_generation_match,omitempty"`
	// SkipUnchanged compares the existing object's size and CRC32C with the
	// local file (which is read once to checksum it) and uploads only when
	// they differ; an unchanged file is "skipped".
	SkipUnchanged bool `json:"skip_unchanged,omitempty"`
	// PreservePOSIX stores the file's mtime and mode in custom metadata
	// (goog-reserved-file-mtime, in seconds since the Unix epoch, and
	// goog-reserved-posix-mode, in octal), as gcloud's --preserve-posix does.
	PreservePOSIX bool `json:"preserve_posix,omitempty"`
	// Encryption, when set, is the keys of this call: they replace the
	// Client's (Options.EncryptionKey, KMSKeyName, DecryptionKeys) for
	// everything it writes and reads, composite components and resumed
	// sessions too. nil: the Client's. See Encryption. Never saved.
	Encryption *Encryption `json:"-"`
}

// doesNotExist reports whether the upload may only create the object:
// NoClobber, or IfGenerationMatch of 0.
func (o UploadOptions) doesNotExist() bool {
	return o.NoClobber || o.IfGenerationMatch != nil && *o.IfGenerationMatch == 0
}

// generationMatch is the generation the upload may only replace; 0 for
// none (IfGenerationMatch nil, or 0: see doesNotExist).
func (o UploadOptions) generationMatch() int64 {
	if o.IfGenerationMatch == nil {
		return 0
	}
	return *o.IfGenerationMatch
}

// notReplaced is the error of an upload whose IfGenerationMatch was not
// met (cause, a 412): the object exists, or has another generation.
func notReplaced(dst URL, o UploadOptions, cause error) error {
	if o.generationMatch() == 0 {
		return fmt.Errorf("upload: %s: not written: the object exists (IfGenerationMatch 0: only if absent): %w", dst, cause)
	}
	return fmt.Errorf("upload: %s: not replaced: its generation is not %d: %w", dst, o.generationMatch(), cause)
}

// DownloadOptions are the per-call choices of a download.
type DownloadOptions struct {
	// SkipUnchanged leaves an existing local file alone when its size and
	// CRC32C match the object's.
	SkipUnchanged bool `json:"skip_unchanged,omitempty"`
	// NoClobber never replaces an existing local file ("skipped").
	NoClobber bool `json:"no_clobber,omitempty"`
	// PreservePOSIX restores mtime and mode from the metadata that
	// UploadOptions.PreservePOSIX (or gsutil, or gcloud) stored.
	PreservePOSIX bool `json:"preserve_posix,omitempty"`
	// Decompress writes the content of an object stored with
	// Content-Encoding: gzip, not its stored bytes, as gsutil and gcloud
	// do. The stored bytes are fetched (never transcoded by GCS), resumed
	// in the partial file after a break or a kill, and checked against the
	// object's CRC32C, which describes them; then they are decompressed
	// into a second temporary file beside the target (".NAME.gcsput-gunzip"),
	// which is renamed over it. A stored stream that is not valid gzip is an
	// error matching ErrNotGzip, and nothing is written at the target.
	// SkipUnchanged then compares the local file with the content's size
	// and CRC32C (custom metadata gcsput-decoded-size and
	// gcsput-decoded-crc32c, which gcsput's -z writes). With DownloadWriter the content is
	// decompressed as it arrives. Objects not gzip-encoded are unaffected.
	Decompress bool `json:"decompress,omitempty"`
	// Generation reads that generation of the object (a noncurrent one
	// in a bucket with versioning), not the live one; 0 is the live one.
	// Download and DownloadWriter only: the calls over many objects, and
	// moves (which delete what they read), refuse it (ErrBadOption).
	Generation int64 `json:"generation,omitempty"`
	// Encryption, when set, is the keys of this call: they replace the
	// Client's (Options.EncryptionKey, KMSKeyName, DecryptionKeys) for
	// every object it reads (and the partial
	// download it resumes). nil: the Client's. See Encryption. Never saved.
	Encryption *Encryption `json:"-"`
}

// checkBatch refuses what a download of many objects cannot do.
func (o DownloadOptions) checkBatch() error {
	if o.Generation != 0 {
		return fmt.Errorf("upload: %w: DownloadOptions.Generation names one object's generation: use Download or DownloadWriter, one object at a time", ErrBadOption)
	}
	return nil
}
