package upload

// UploadOptions are the per-call choices of an upload.
type UploadOptions struct {
	// Attrs is the metadata to set; see Attrs for the defaults.
	Attrs Attrs `json:"attrs,omitzero"`
	// IfAbsent never overwrites: the upload carries ifGenerationMatch=0, and
	// an existing object makes the result "skipped" (not failed).
	IfAbsent bool `json:"if_absent,omitempty"`
	// IfGenerationMatch, when not 0, replaces the object only if its live
	// generation is this one (ifGenerationMatch); otherwise the upload fails
	// with a precondition error and nothing is written.
	IfGenerationMatch int64 `json:"if_generation_match,omitempty"`
	// SkipUnchanged compares the existing object's size and CRC32C with the
	// local file (which is read once to checksum it) and uploads only when
	// they differ; an unchanged file is "skipped".
	SkipUnchanged bool `json:"skip_unchanged,omitempty"`
	// PreservePOSIX stores the file's mtime and mode in custom metadata
	// (goog-reserved-file-mtime, in seconds since the Unix epoch, and
	// goog-reserved-posix-mode, in octal), as gcloud's --preserve-posix does.
	PreservePOSIX bool `json:"preserve_posix,omitempty"`
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
	// and CRC32C (see Decoded). With DownloadStream the content is
	// decompressed as it arrives. Objects not gzip-encoded are unaffected.
	Decompress bool `json:"decompress,omitempty"`
}
