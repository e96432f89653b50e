// Package resumable is gcsput's wire protocol for Google Cloud Storage:
// chunked resumable uploads and ranged downloads that continue from the
// offset the server reports after any failure, verified end to end with
// CRC32C.
//
// # Uploads
//
// [Client.Start] creates a session (the initiation POST, with the object's
// metadata and preconditions); [Client.Upload] sends a file or any
// io.ReaderAt without buffering it, [Client.UploadStream] a plain io.Reader
// of known or unknown size through one chunk of memory. The session is a
// value ([Session]) that can be saved as JSON after every chunk and resumed
// by another process: bytes the server already has are not sent again.
//
// After each chunk the next offset is the server's: a 308 with
// "Range: bytes=0-N" means N+1 bytes are persisted (possibly fewer than were
// sent: the rest is sent again), a 308 without Range means none, 200/201
// means the object exists. After any failure (a retryable status, a reset,
// a stall) the client waits per its retry policy, asks the server for its
// offset (a status query, "Content-Range: bytes */*") and continues from
// there. 404 or 410 on the session is [ErrSessionExpired]: start over.
//
// A small object goes in one request instead: [Client.Insert]
// (uploadType=multipart) sends the metadata, with the bytes' CRC32C, and the
// bytes together, under the same retry policy and stall watchdog. It is
// retried whole and never saved.
//
// # Events
//
// Options.OnEvent is told every step ([Event]): sessions started, chunks
// answered, status queries, retries, resumes, and every byte moved: request
// body bytes as they go out (EventSent, for failed attempts too) and
// response body bytes as they arrive (EventProgress.Length). A caller adds
// these up for the bytes a transfer really cost; no transport needs to be
// wrapped to count them.
//
// # Integrity
//
// The CRC32C (and, with Options.MD5, the MD5) of the object is computed
// while the chunks are sent, over exactly the bytes the server persisted: a
// chunk is hashed as it is sent, and the hash is kept only if the server
// kept the whole chunk; otherwise the persisted part is re-read from the
// source. The final request carries "X-Goog-Hash", so the server refuses to
// create an object whose bytes differ from what was read, and the object's
// crc32c in the final response is compared too ([ErrChecksumMismatch]).
// The hash state is part of the saved session.
//
// # Downloads
//
// [Client.Download] and [Client.DownloadAt] fetch alt=media, pinned to the
// object's generation, resume a broken response with "Range: bytes=N-" from
// the bytes written, and compare the CRC32C of everything written with the
// server's x-goog-hash. A slice ([DownloadSpec].Start and End) is one
// ranged part of a sliced download: several run at once into one file, each
// resuming inside itself, and their CRC32Cs are joined with [CombineCRC32C]
// to check the whole. gzip-encoded objects arrive as stored unless
// [DownloadSpec].Decompress asks the server to transcode them (then they are
// not verified; see DownloadSpec).
//
// # Retries and stalls
//
// Every request goes through a [retry.Runner] (Options.Retry). For uploads
// and downloads the retry budget restarts whenever the server's offset
// advances, so it bounds retries without progress. Independently, a stall
// watchdog abandons an attempt during which no bytes moved for
// Options.StallTimeout (60 s by default) and reports a [*StallError]; time
// spent reading the source or writing the destination does not count.
//
// A 401 is not retried by the runner: refreshing credentials is the
// transport's business (package auth drops a refused token and repeats a
// request whose body it can replay). A chunk it cannot replay, its body
// being read from the source as it goes, comes back as a 401: the upload
// then asks the session's offset, which carries a fresh token, and sends
// from there, at most [MaxAuthRetries] times without progress; a streamed
// multipart insert is sent again likewise. Any other 401 is final
// ([ErrUnauthorized]), and the session stays open for a later resume.
//
// # Errors
//
// Every error is an [*Error] naming the step and the object. Match the
// cases with errors.Is: [ErrSessionExpired], [ErrChecksumMismatch],
// [ErrPreconditionFailed], [ErrUnauthorized], [ErrStalled]; use errors.As for the server's
// *googleapi.Error (status, reason, message), a [*SourceError] for a
// source that could not be read or did not match the session, and a
// *retry.Error when the retry budget ran out.
//
// # Secrets
//
// A session URI's upload_id lets anyone write the object. It never appears
// in an [Event], an error string or [Session.String]; only
// [Session.Marshal] writes it, for a state file that must be kept private.
// A session URI, a saved session or a redirect whose scheme, host or port is
// not the endpoint's is refused before a byte is sent ([ErrForeignOrigin],
// [CheckOrigin]): an https endpoint's upload never continues in cleartext.
//
// # Emulators
//
// Set Options.Endpoint to the emulator's URL (for package fakegcs,
// Server.URL) and leave HTTPClient without credentials.
package resumable
