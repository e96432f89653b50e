// Package upload is gcsput's library: bulk, resumable, verified transfers
// between local files and Google Cloud Storage. The gcsput command is a thin
// layer over it.
//
//	c, err := upload.New(ctx, upload.Options{})  // ADC, or STORAGE_EMULATOR_HOST
//	defer c.Close()
//	dst, err := upload.ParseURL("gs://my-bucket/backup/")
//	results, err := c.UploadDir(ctx, "/srv/data", dst, upload.UploadOptions{SkipUnchanged: true})
//
// Each entry point has a runnable example against an in-process fakegcs:
// a file upload (the package example), a directory ([Client.UploadDir]),
// downloads ([Client.Download], [Client.DownloadPrefix]), a resume after an
// interruption ([Client.Resume]), a sync with its dry run ([Client.Sync]),
// copies and moves. docs/library.md maps the official client's calls to
// these.
//
// # Emulators and fakegcs
//
// Point a Client at a fakegcs (or any emulator) with its base URL:
// Options{Endpoint: srv.URL(), Auth: auth.Options{NoAuth: true}}. The
// official client's form, srv.Endpoint() (URL + "/storage/v1/"), is taken
// as the same; any other path is refused by [New] (ErrBadOption). With
// Endpoint empty, STORAGE_EMULATOR_HOST ("host:port") is used if set.
//
// # Transfers
//
// [Client.UploadFile], [Client.UploadReader] (a stream), [Client.UploadDir],
// [Client.Upload] (a list) and [Client.UploadSeq] (a stream of items) send
// bytes; [Client.Download], [Client.DownloadObjects], [Client.DownloadPrefix]
// and [Client.DownloadWriter] (a stream) fetch them. Per-call choices are in
// [UploadOptions] (metadata, preconditions, skipping unchanged files) and
// [DownloadOptions]; the Client's own, set once, in [Options] (endpoint,
// credentials, chunk size, parallelism, retries, state directory, callbacks
// for progress, results and events). [Options].BatchProgress is given the
// totals of a whole batch as they grow ([BatchProgress]: files and bytes done
// of those known, rate, ETA, retries, resumes), so a program draws one
// progress line without keeping its own map of transfers.
//
// Preconditions have one convention, the official client's
// storage.Conditions: [UploadOptions].IfGenerationMatch and
// [CopyOptions].IfGenerationMatch are *int64, nil for none, a pointer to N
// to replace only generation N, a pointer to 0 to write only if no live
// object exists (failing otherwise; NoClobber skips instead: "skipped",
// not failed, one name on [UploadOptions], [CopyOptions], [MoveOptions]
// and [DownloadOptions]).
//
// The other ideas have one convention each too. Places: a place that can
// only be remote is a [URL], one that can only be local a string path, one
// that may be either a [Side] ([Client.Sync], [Client.Move], [MoveItem],
// [Client.MovePrefix]'s destination). Results: a call over many items
// returns ([]*Result, error), in order; a ...Seq call ([Client.UploadSeq],
// [Client.MoveSeq]) is the streaming form, keeping none and giving each to
// [Options].OnResult as it ends. Streams: [Client.UploadReader] reads an
// io.Reader, [Client.DownloadWriter] writes an io.Writer. Keys: per call,
// as the official client sets them per object: the [Encryption] of the
// call's options, which replaces the Client's ([Options].EncryptionKey,
// KMSKeyName, DecryptionKeys; the default when a call sets none) and is
// carried whole by every path of the call (uploads, composite components,
// their records and resume, copies, moves, sync, batches); one upload's
// or copy's KMS key may be its [Attrs].KMSKeyName.
//
// Files below [Options].SmallFileThreshold (8 MiB) go in one multipart
// request carrying their CRC32C; larger files and streams use a resumable
// session (package resumable): chunks of [Options].ChunkSize, every request
// retried under [Options].Retry, and after any failure the upload continues
// from the offset the server reports. The server checks each object's CRC32C
// before it exists; downloads are checked before they are renamed into
// place.
//
// # Parallel composite uploads
//
// A file of at least [Options].ParallelThreshold (128 MiB) may go up as a
// parallel composite upload ([Options].ParallelUpload): at most 32
// components, in whole rounds of the streams of [Options].Parallelism, each
// stream one a round, of about 32 MiB or smaller, down to [MinPartSize]
// ([Options].ComponentSize set is their least size), each a temporary
// object named [ComponentPrefix]HASH/INDEX in the destination's bucket (HASH
// of the file's fingerprint, the destination and the component size),
// uploaded with ifGenerationMatch=0 through the same resumable chunk loop
// and retry budget as a whole file (at the default ChunkSize, in one
// request each). The components share the
// [Options].Parallelism budget: the upload's own stream runs one, others
// run on streams taken only while free. Then one compose request creates
// the destination with the upload's metadata and preconditions; its CRC32C
// must be the combination of the components' (resumable.CombineCRC32C), or
// the object is deleted and the upload fails matching
// resumable.ErrChecksumMismatch. The components are deleted after (404
// counts as deleted). The record lists every component: a process killed
// at any point resumes the ones in flight from the server's offset and
// never sends a finished one again. With ParallelAuto (the default) a file
// is composed only into a bucket whose default storage class is STANDARD,
// with no retention policy and no default event-based hold; [Options].Warn
// is told once per bucket why a large file went up whole, and before the
// first composite upload into a bucket that composite objects have no MD5.
//
// # One object, two types
//
// Every transfer ends in a [Result]: its [Status] (uploaded, resumed,
// restarted, downloaded, skipped, failed, interrupted; deleted, for a
// sync's deletion), the object it wrote or read (bucket, name, generation,
// size, CRC32C), the bytes that crossed the network, attempts, the offset
// it resumed from, a note and the error.
// The metadata calls, [Client.Stat], [Client.Update], [Client.Compose],
// [Client.List] and [Client.Versions], return the official client's
// *storage.ObjectAttrs (cloud.google.com/go/storage), which they use on the
// same HTTP client, with gcsput's retries; [Client.Delete] deletes (the
// live generation, or [DeleteOptions].Generation, under
// [DeleteOptions].IfGenerationMatch), and [Client.ReadRange] reads part of
// an object. A Result holds only what the
// transfer established; [Client.Stat] gives the rest.
//
// # Sessions that survive the process
//
// With a state directory ([Options].StateDir; none by default, [DefaultStateDir]
// is where the gcsput command keeps its: $XDG_STATE_HOME/gcsput or
// ~/.local/state/gcsput), an upload saves its session before it sends the
// first byte and after every chunk the server acknowledges: a 0600 file
// written atomically (temporary file, fsync, rename) in a directory only the
// user may write, keyed by source and destination, holding the session URI,
// the CRC32C state and the source's fingerprint (path, size, mtime, ctime,
// inode). A process killed at any moment and run again with the same
// arguments resumes from the server's offset without re-sending what the
// server has ([StatusResumed]). The saved session is dropped and the upload
// starts over ([StatusRestarted], with Result.Note saying why) when the file
// changed, when the session is older than [MaxSessionAge] (6.5 days; GCS
// keeps sessions a week), or when the server answers 404/410. A saved file
// that is not the user's, not 0600, or a link, and a session on another
// host than the endpoint, are ignored with a warning ([Options].Warn).
// Session URIs are credentials: they never appear in errors, events or logs.
//
// A save that fails (a full or read-only state directory) does not stop the
// transfer, but it is never silent: the first failure of a Client is a
// warning ([Options].Warn) as it happens, and each transfer's Result.SaveErr
// (matching [ErrNotSaved]) holds its first failure; an interrupted transfer
// with SaveErr set and Saved false starts over when run again.
//
// [Client.Sessions] lists what was left behind as [Session] values,
// [Client.Resume] finishes it with the options each transfer was started
// with, [Client.CancelSession] abandons one and [Client.GCSessions] removes
// the expired ones, with the components of composite uploads they leave. A
// transfer that can never finish (its source gone, its record edited by
// hand) fails one Resume with an error matching [ErrUnfinishable], is
// skipped by later ones ([Session].Unfinishable says why) and GCSessions
// removes it. A record is checked against its file name, a hash of its kind,
// source, destination and shard: an edited one is never sent a request.
//
// A transfer that may save a record holds a lock on it (an advisory flock
// on a file beside it, which the kernel drops when the process dies) from
// before it reads the record until after its last save. CancelSession,
// GCSessions and a second transfer of the same source and destination
// leave a held record alone ([ErrInUse], [InUseError] with the holder's
// pid); [Client.ForceCancelSession] asks the holder to stop (it fails with
// [ErrStopped]) and cancels once it has let go.
//
// Downloads write to ".NAME.gcsput-partial" beside the target and rename it
// over the target only after the CRC32C of every byte matched the object's; a
// later run continues a partial file when the object's generation is
// unchanged. Without a state directory a download that fails or is
// interrupted removes its partial file: nothing would tell a later run
// which generation it holds. A stream (stdin) cannot be read twice, so its session is not
// saved. With [DownloadOptions].Decompress, an object stored with
// Content-Encoding: gzip is fetched, resumed and verified as stored, then
// decompressed into ".NAME.gcsput-gunzip", which is renamed over the target.
//
// # Directories, symlinks and unsafe names
//
// [Client.UploadDir] walks the directory: a file's path below the directory,
// with "/" separators, becomes the object name below the prefix. A symlink to
// a file is uploaded under the link's name with the target's content (as
// gsutil and gcloud do); a symlink to a directory is not followed (no cycles,
// nothing from outside the tree) and is reported skipped; a broken symlink
// fails; sockets, devices and named pipes are skipped. A tree with an
// unreadable directory is refused before any request.
//
// [Client.DownloadPrefix] writes through an os.Root on the destination, and
// refuses ([ErrUnsafePath]) any object whose name is absolute, climbs out
// with "..", or leads through a symlink out of the destination; two objects
// that map to one local file, or of which one needs the other's file as a
// directory ("a" and "a/b": the directory wins), are found before anything
// is fetched ([ErrCollision]).
//
// # Wildcards
//
// [Client.Glob] expands a gs:// wildcard as gsutil and gcloud storage do ("*"
// within one folder, "**" across them, "?", "[ab]"), in name order: the
// listing narrows by the pattern's literal prefix and sends the JSON API's
// matchGlob where its syntax can say the pattern, and every name is matched
// again by the client. [GlobFiles] expands a local wildcard the shell did not
// (a quoted one). A pattern that matches nothing is a [NoMatchError]
// ([ErrNoMatch]); [HasWildcard] says whether a name holds a wildcard at all.
// The engine is the one sync's include and exclude filters use.
//
// # Sync
//
// [Client.Sync] makes one [Side] mirror another: a local directory a gs://
// prefix ([LocalSide], [RemoteSide], or [ParseSide] for "gs://b/p" and
// paths alike), or the reverse. [Client.PlanSync] is its dry run.
//
//	src := upload.LocalSide("/srv/data")
//	dst, err := upload.ParseSide("gs://backups/data")
//	o := upload.SyncOptions{Delete: true, Exclude: []string{"*.tmp"}}
//	plan, err := c.PlanSync(ctx, src, dst, o) // plan.Copies, plan.Deletes, plan.Refused
//	report, err := c.Sync(ctx, src, dst, o)
//
// Both sides are read in full before anything changes (a listing that
// fails is [ErrIncompleteSide]): both are streamed in GCS's name order and
// merged, and the plan beyond [DefaultSpillAt] entries goes to a temporary
// file, so memory does not grow with the tree (see [Client.Sync]). Entries are compared by size and CRC32C (the
// local file is read), or with [SyncOptions].CompareMTime by size and
// modification time; an object stored gzip-encoded by its content's size
// and CRC32C (its gcsput-decoded-size and gcsput-decoded-crc32c metadata). What differs is copied by the Client's own
// transfers (resumable, verified, POSIX mtime and mode kept), each Result
// given to [Options].OnResult, then counted in a [SyncReport].
//
// With [SyncOptions].Delete, what the source lacks is deleted, an object
// only at the generation listed. The delete guard ([DeleteGuardError],
// matching [ErrDeleteGuard]) refuses the whole sync, before anything is
// copied, when the source holds nothing (an unmounted volume, a mistyped
// prefix), when the deletes would remove every entry of a destination
// that shares no path with the source, and when they are more than
// [SyncOptions].MaxDelete allows (by default half the destination, or
// [DefaultDeleteFloor] entries if that is more). After any failure or
// interruption the deletes are withheld ([ErrDeletesWithheld];
// [SyncReport].WithheldBecause says why). A symlink to a directory or a
// pipe the walk skips keeps what the destination holds under its name;
// gcsput's own files are neither copied nor deleted. With [Options].Shard,
// a sync copies and deletes only its shard's paths, and a failure of the
// walk in another shard withholds its deletes too.
//
// # Memory and concurrency
//
// [Options].Parallelism (default 12) is a budget of data streams, requests
// that move an object's bytes: batch methods run that many transfers at
// once, on a bounded pool of goroutines that all exit before the method
// returns, and the extra slices of a sliced download (Options.SliceThreshold,
// MaxSlices) and components of a composite upload (Options.ParallelUpload)
// run only on streams free in the same budget. By default their number
// follows the budget (one per stream, each of at least [MinPartSize]), so a
// higher Parallelism moves one large file on more streams; a part runs only
// on a stream, so more parts never mean more memory.
// Files are streamed from disk: a file upload holds no chunk buffer (a
// re-sent chunk is re-read from the file), a file of 256 KiB or less is
// read once and sent from memory in one request (up to 60 KiB from a pooled
// 64 KiB buffer, reused once its request is done), a download uses a 64 KiB
// copy buffer per stream (so per slice), a stream upload ([Client.UploadReader]) one chunk. Memory is
// therefore bounded by Parallelism × ChunkSize at most (16 MiB × 12 = 192 MiB
// with the defaults, reached only by streams), and in practice by
// Parallelism × a few hundred KiB for files.
//
// # Errors
//
// Errors are told apart with errors.Is; their text says the rest. Bad bucket
// or object names match [ErrBadName], and a chunk size that is not a multiple
// of 256 KiB [ErrBadOption]: these, a missing file, a directory given as a
// file, or an unreadable tree fail before any request. A batch in which some
// transfer failed returns its results and an error matching [ErrSomeFailed],
// and, when its context ended, the context's error too (context.Canceled);
// each failed Result has its own Err, which may match [ErrUnsafePath] or
// [ErrCollision]. The session methods of a Client without a state directory
// return [ErrNoState]. A sync's errors are [ErrDeleteGuard],
// [ErrDeletesWithheld], [ErrIncompleteSide] and, for sides or options that
// cannot work, [ErrBadOption] (see [CheckSync]).
// A listing whose server gives a page token it gave before, or answers page
// after page without objects, ends with an error matching [ErrListNoProgress];
// a JSON answer longer than [MaxJSONAnswer] with one matching
// [ErrAnswerTooLarge] (object data is never capped).
// Every method of a closed Client returns an error
// matching [ErrClosed]; a transfer that Close cancelled ends interrupted. Failures of the transfer itself match package
// resumable's sentinels (resumable.ErrChecksumMismatch,
// resumable.ErrSessionExpired, ...); a missing object is
// storage.ErrObjectNotExist; missing credentials are reported by package auth
// (auth.ErrNoCredentials) with what was tried and how to fix it, and a key
// that cannot be used (unreadable, not JSON, lacking fields) matches
// auth.ErrBadCredentials.
package upload
