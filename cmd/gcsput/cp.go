package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

// cpFlags are cp's own options, next to the shared remote, transfer and state options.
type cpFlags struct {
	remote   remoteFlags
	transfer transferFlags
	state    stateFlags

	recursive     bool     // -r, -R: directories and prefixes
	noClobber     bool     // -n: never overwrite (ifGenerationMatch=0; existing local files kept)
	skipUnchanged bool     // --skip-unchanged: compare size + CRC32C, send only what differs
	headers       []string // -h 'Header: value'
	metadata      []string // --metadata k=v
	contentType   string   // --content-type
	preservePosix bool     // --preserve-posix: mtime and mode in goog-reserved-* metadata
	fromStdin     bool     // -I: sources are read from stdin, one per line
	storageClass  string   // --storage-class of uploaded objects
	ifGen         *int64   // --if-generation-match: write only over this generation (0: only if absent); nil: not given
	gzipExts      string   // -z EXT,...: store these files gzipped
	gzipAll       bool     // -Z: store every file gzipped
	allVersions   bool     // -A: copy every generation of gs:// sources, oldest first

	identity     *jobIdentity // the job the operands name, for the summary
	noDecompress bool         // --do-not-decompress: download gzip-encoded objects as stored
	hold         holdFlags    // --retain-until, --retention-mode, --temporary-hold, --event-based-hold
	manifest     string       // -L, --manifest-path: gcloud's copy manifest, appended; its done sources skipped
	customTime   string       // --custom-time RFC 3339: customTime of the uploaded objects
	customAt     time.Time    // customTime, parsed by check
}

var cpCommand = &command{
	name:    "cp",
	args:    "[flags] SRC... DST",
	summary: "copy files, directories and streams to and from GCS, and objects between buckets",
	help: `
Copies local files, directories (-r) and standard input ("-") to GCS, objects or prefixes
(-r) to local paths or standard output ("-"), and objects or prefixes (-r) between gs://
locations.

A copy between gs:// locations is made by GCS (the JSON API's rewrite): no byte passes
through this machine. The source generation is read when the copy starts and pinned
(ifSourceGenerationMatch): a source overwritten meanwhile fails the copy with an error that
names both generations, and nothing is written. -n skips an existing destination and makes
the copy conditional on there being none; --if-generation-match GEN replaces only that
generation; --skip-unchanged skips a destination with the source's size and CRC32C;
--storage-class sets the copy's class. The copy keeps its source's metadata (-h, --metadata,
--content-type, -z, -Z and -P apply to uploads only). A copy across locations, storage
classes or keys takes GCS several calls: after each, its rewrite token is saved in the state
directory, and a copy cut short resumes from the last call, not from byte 0 (the same
command again, or 'gcsput resume'; 'gcsput sessions ls' lists it as "rewrite"). Every call
is retried like any request. The copy's CRC32C must equal the source's. Progress and --json
report the bytes the server rewrote ("rewritten"; op "copy", status "copied").

Uploads are resumable and verified: a file goes up in chunks, every failure is retried with
backoff (GCS's truncated exponential by default) and the upload continues from the offset
the server reports; the final request carries the CRC32C so a corrupt object is never
created. An upload cut short (Ctrl-C, a killed process, a lost network) is recorded in the
state directory; running the same command again, or 'gcsput resume', continues it from
where the server has it. A state directory that cannot be written (full, read-only) is a
warning the first time (stderr, and a --json warning line), and a transfer cut short whose
state could not be saved is reported "not resumable" (save_error, and not_resumable in the
--json summary). Downloads go to a temporary file that is renamed only after the
checksum matches.

Before the first transfer of a batch (-r, several sources, -I), the bucket is asked once
(testIamPermissions) whether it exists and whether these credentials may write there (for a
download: list it): a mistyped bucket or a key that may not write is one line and exit
code 2, with nothing sent, not one 404 or 403 per file. If that question itself fails, the
batch's first 403 or 404 stops it (exit 1).

Files of 128 MiB or more (--parallel-threshold) go up as parallel composite uploads: at most
32 components of 32 MiB, or smaller (down to 8 MiB) so each -j stream has one (--component-size
sets the least size), sent at once on the -j streams as
temporary objects gcsput-tmp/HASH/N in the destination's bucket, then composed into the
destination (with its metadata, -n or --if-generation-match) and deleted. A composite object
has a CRC32C but no MD5. --parallel-upload auto (the default) composes only into buckets whose
default storage class is STANDARD, with no retention policy and no default event-based hold
(other classes charge early deletion for the components; a policy or a hold keeps them from
being deleted); on composes always, off never. A composite upload cut short resumes component
by component; 'gcsput sessions gc' removes orphaned components.

Destination names follow gsutil and gcloud storage cp, except that they depend only on
the command line, never on what already exists, so a rerun (and every shard) resolves the
same names. End a destination with "/" to copy into it as a folder.
  cp FILE gs://bkt/name        gs://bkt/name
  cp FILE gs://bkt/dir/        gs://bkt/dir/FILE (a trailing slash names a folder)
  cp F1 F2 gs://bkt/dir        gs://bkt/dir/F1 and gs://bkt/dir/F2
  cp -r DIR gs://bkt           gs://bkt/DIR/...
  cp -r DIR gs://bkt/dst/      gs://bkt/dst/DIR/...
  cp -r DIR gs://bkt/dst       gs://bkt/dst/... (DIR's contents)
  cp - gs://bkt/name           gs://bkt/name, from standard input
  cp gs://bkt/o PATH           PATH, or PATH/o if PATH is a directory
  cp -r gs://bkt/p PATH/       PATH/p/... (also when PATH is . or ..)
  cp -r gs://bkt/p PATH        PATH/... (p's contents)
  cp gs://bkt/o -              standard output
  cp gs://a/o gs://b/x         gs://b/x, copied on the server
  cp gs://a/o gs://b/dir/      gs://b/dir/o
  cp -r gs://a/p gs://b/q/     gs://b/q/p/... (the folder keeps its name)
  cp -r gs://a/p gs://b/q      gs://b/q/... (p's contents)
Two objects that would land on one local file, or of which one needs the other's file as a
directory (gs://bkt/p/a and gs://bkt/p/a/b), are found before anything is downloaded: the
directory wins, and the other object fails naming both (as with sync).

Headers given with -h, as in gsutil: Content-Type, Cache-Control, Content-Disposition,
Content-Encoding, Content-Language, and x-goog-meta-KEY for custom metadata.

-z EXT,... and -Z store files gzip-compressed with Content-Encoding: gzip, as gsutil's do,
and keep the original's size and CRC32C in the metadata gcsput-decoded-size and
gcsput-decoded-crc32c (sync and --skip-unchanged compare local files with them). Downloads
of an object stored gzip-encoded (by gcsput, gsutil or gcloud) write its content, not the
compressed bytes, as gsutil and gcloud do: the stored bytes are fetched (GCS does not
transcode them), resumed after a break or a kill, and checked against the object's CRC32C,
which describes them; only then are they decompressed, into a second temporary file that is
renamed over the target. An object whose stored bytes are not valid gzip fails, naming it,
and nothing is written. To standard output the content is decompressed as it arrives.
--do-not-decompress writes the stored bytes instead, as gcloud's flag of that name does.

` + wildcardHelp + `
In cp, a wildcard is several sources whatever it matches, so the destination is a folder
(a local directory, or DST/ in GCS). A gs:// wildcard gives the objects it matches, each
under its base name (gs://b/docs/**.txt flattens; with -r, a matched folder comes whole
under its own name). A quoted local wildcard gives the files it matches; a directory it
matches is omitted without -r. Two matches that would land on one name are refused before
anything is sent.

Examples:
  gcsput cp report.pdf gs://my-bucket/reports/
  gcsput cp -r ./photos gs://my-bucket/                  # gs://my-bucket/photos/...
  gcsput cp 'gs://my-bucket/logs/2024-*.gz' ./logs/      # quoted: gcsput expands it
  gcsput cp 'reports/**.pdf' gs://my-bucket/pdf/
  gcsput cp -j 16 --skip-unchanged -r /srv/data gs://backups/nightly/
  tar cz /etc | gcsput cp - gs://backups/etc.tgz
  find logs -name '*.log' | gcsput cp -I gs://my-bucket/logs/
  gcsput cp -h 'Cache-Control: no-cache' --metadata owner=ops index.html gs://site/
  gcsput cp -r gs://my-bucket/photos ./restore
  gcsput cp gs://backups/etc.tgz - | tar xz
  gcsput cp -n gs://my-bucket/big.iso gs://other-bucket/
  gcsput cp -r gs://my-bucket/photos gs://archive/2024/
  gcsput cp --json -r ./data gs://bkt/data/ > result.ndjson
`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		f := &cpFlags{}
		fs.Bool(&f.recursive, "recursive", "r", "copy directories and prefixes with everything under them")
		fs.Alias("R", "recursive")
		fs.Bool(&f.noClobber, "no-clobber", "n", "never overwrite: skip objects (or local files) that already exist")
		fs.Bool(&f.skipUnchanged, "skip-unchanged", "", "skip files whose size and CRC32C match the existing object")
		fs.String(&f.manifest, "manifest-path", "L", "FILE", "append a CSV row per item to FILE (gcloud's and gsutil's manifest: source, destination, times, size, result) and skip the sources it records as OK or skip, so a rerun sends only the rest")
		fs.List(&f.headers, "header", "h", "'NAME: VALUE'", "set a header on uploaded objects, e.g. -h 'Cache-Control: no-cache' (repeatable)")
		fs.List(&f.metadata, "metadata", "", "KEY=VALUE", "set custom metadata on uploaded objects (repeatable; KEY= with no value sets nothing)")
		fs.String(&f.contentType, "content-type", "", "TYPE", "content type of uploaded objects (default: from the file extension)")
		fs.Bool(&f.preservePosix, "preserve-posix", "P", "keep mtime and mode in object metadata and restore them on download")
		fs.Bool(&f.fromStdin, "stdin-list", "I", "read the sources from standard input, one per line")
		fs.Generation(&f.ifGen, "if-generation-match", "", "GEN", "upload (or copy) one file or object only if the destination's live generation is GEN; 0: only if it does not exist (it fails if it does; -n skips it instead)")
		fs.String(&f.gzipExts, "gzip-ext", "z", "EXT,...", "store files with these extensions gzip-compressed, with Content-Encoding: gzip (downloads decompress them after checking the stored bytes), e.g. -z html,css,js")
		fs.Bool(&f.gzipAll, "gzip", "Z", "store every uploaded file gzip-compressed, with Content-Encoding: gzip (downloads decompress them)")
		fs.Bool(&f.allVersions, "all-versions", "A", "copy every generation of gs:// sources, noncurrent ones first, in order (a destination bucket with versioning keeps the history), as gsutil and gcloud cp -A")
		fs.Bool(&f.noDecompress, "do-not-decompress", "", "download objects stored with Content-Encoding: gzip as stored, compressed (as gcloud's flag of that name)")
		fs.String(&f.storageClass, "storage-class", "s", "CLASS", "storage class of uploaded (or copied) objects: STANDARD, NEARLINE, COLDLINE or ARCHIVE (default: the bucket's; a copy: the source's)")
		fs.String(&f.customTime, "custom-time", "", "TIME", "set the customTime of uploaded objects (RFC 3339, e.g. 2026-01-02T15:04:05Z), as gcloud's --custom-time; lifecycle rules read it")
		f.hold.register(fs)
		f.transfer.register(fs)
		f.state.register(fs)
		f.remote.register(fs)
		return func(ctx context.Context, ops []string) error { return a.cp(ctx, f, ops) }
	},
}

// cp turns the flags into options, makes one library call (which checks the operands,
// plans every transfer and runs them) and prints what it reports.
func (a *app) cp(ctx context.Context, f *cpFlags, ops []string) error {
	if err := f.check(); err != nil {
		return err
	}
	if f.fromStdin {
		srcs, err := readSourceList(a, ops)
		if err != nil {
			return err
		}
		ops = append(srcs, ops...)
	}
	if len(ops) < 2 {
		return usagef("need a source and a destination, e.g. 'gcsput cp file.txt gs://bucket/'")
	}
	srcs, dst := ops[:len(ops)-1], ops[len(ops)-1]
	f.identity = newJobIdentity("cp", srcs, dst, f.transfer.shard.Count, nil)
	o := f.options(a)
	// The operands are checked before connecting: a typo must not wait for credentials.
	if err := upload.CheckCopyAll(srcs, dst, o); err != nil {
		return libError(err)
	}
	if err := f.headersCheck(srcs, dst); err != nil {
		return err
	}
	if len(srcs) == 1 && srcs[0] == "-" && isRemote(dst) && f.transfer.chunkSize > resumable.MaxStreamChunkSize {
		return usagef("--chunk-size %s is too large for standard input, whose chunk is held in memory: the limit is %s",
			formatSize(f.transfer.chunkSize), formatSize(resumable.MaxStreamChunkSize))
	}
	cfg := jobConfig{remote: &f.remote, transfer: &f.transfer, stateDir: f.state.stateDir, identity: f.identity,
		manifest: f.manifest}
	cfg.noState, cfg.dataOnStdout = dst == "-", dst == "-"
	j, err := a.newJob(ctx, cfg)
	if err != nil {
		return err
	}
	defer j.close()
	_, err = j.client.CopyAll(ctx, srcs, dst, o) // each result went to j.add as it ended
	return j.end(err)
}

// options are cp's flags as the library's.
func (f *cpFlags) options(a *app) upload.CopyAllOptions {
	h, _ := parseHeaders(f.headers, f.metadata, f.contentType) // checked in cpFlags.check
	holds, _ := f.hold.holds()                                 // checked in cpFlags.check
	var gz []string
	if f.gzipExts != "" {
		gz = strings.Split(f.gzipExts, ",")
	}
	return upload.CopyAllOptions{
		Recursive: f.recursive, NoClobber: f.noClobber, SkipUnchanged: f.skipUnchanged,
		IfGenerationMatch: f.ifGen, PreservePOSIX: f.preservePosix, AllVersions: f.allVersions,
		Attrs: upload.Attrs{
			ContentType: h.ContentType, CacheControl: h.CacheControl,
			ContentDisposition: h.ContentDisposition, ContentEncoding: h.ContentEncoding,
			ContentLanguage: h.ContentLanguage, Metadata: h.Metadata,
			StorageClass: f.storageClass, Holds: holds, CustomTime: f.customAt,
		},
		GzipExtensions: gz, GzipAll: f.gzipAll, NoDecompress: f.noDecompress,
		Stdin: a.stdin, Stdout: a.stdout, Listed: f.fromStdin, DiscardResults: true,
		OnOmit: func(dir, pattern string) {
			fmt.Fprintf(a.stderr, "gcsput: omitting directory %s (matched by %s): add -r to copy directories\n", escapeText(dir), escapeText(pattern))
		},
	}
}

// headersCheck refuses -h, --metadata and --content-type (given, even when they set
// nothing) where nothing is uploaded.
func (f *cpFlags) headersCheck(srcs []string, dst string) error {
	if len(f.headers) == 0 && len(f.metadata) == 0 && f.contentType == "" {
		return nil
	}
	switch {
	case !isRemote(dst):
		return usagef("-h, --metadata and --content-type apply to uploads; to change an object's metadata use 'gcsput meta set'")
	case allRemote(srcs):
		return usagef("-h, --metadata and --content-type apply to uploads; a copy keeps its source's metadata: change it after with 'gcsput meta set'")
	}
	return nil
}

// end prints the summary of a batch the library ran and returns the error that sets the
// exit code: err itself when it ended the batch before its transfers (an operand, a
// refusal, a walk or a listing that failed), or a batch stopped at its first failure.
func (j *job) end(err error) error {
	if err != nil && !errors.Is(err, upload.ErrSomeFailed) && !errors.Is(err, upload.ErrBatchStopped) {
		return libError(err)
	}
	ferr := j.finish()
	if errors.Is(err, upload.ErrBatchStopped) {
		return err
	}
	return ferr
}

// libError is a library error as the command reports it: a bad operand is a usage error,
// a batch the server refused before its first transfer a refusal (both exit 2).
func libError(err error) error {
	switch {
	case errors.Is(err, upload.ErrRefused):
		return refusef("%v", err)
	case errors.Is(err, upload.ErrBadOperand):
		return usagef("%v", err)
	}
	return err
}

func (f *cpFlags) check() error {
	if err := f.remote.check(); err != nil {
		return err
	}
	if err := f.transfer.check(); err != nil {
		return err
	}
	if _, err := parseHeaders(f.headers, f.metadata, f.contentType); err != nil {
		return err
	}
	switch c := strings.ToUpper(f.storageClass); c {
	case "", "STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE":
		f.storageClass = c
	default:
		return usagef("--storage-class %q: use STANDARD, NEARLINE, COLDLINE or ARCHIVE", f.storageClass)
	}
	if err := checkManifest(f.manifest); err != nil {
		return err
	}
	if f.manifest != "" && (f.gzipAll || f.gzipExts != "") {
		// -z and -Z upload a compressed temporary copy: its rows would name
		// that copy, which a rerun never sends again, so nothing would be skipped.
		return usagef("-L with -z or -Z is not supported: the manifest would name the compressed temporary copies, not your files")
	}
	if f.customTime != "" {
		t, err := time.Parse(time.RFC3339Nano, f.customTime)
		if err != nil {
			return usagef("--custom-time %s: give an RFC 3339 time, e.g. 2026-01-02T15:04:05Z", shellQuote(f.customTime))
		}
		f.customAt = t
	}
	_, err := f.hold.holds()
	return err
}

// checkManifest refuses a -L path that cannot be a manifest file before
// anything is sent: a directory, or a file in a directory that does not exist.
func checkManifest(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usagef("-L %s is a directory: name the manifest file (CSV) to write", shellQuote(path))
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return usagef("-L %s: directory %s does not exist: create it, or name a file in another", shellQuote(path), shellQuote(filepath.Dir(path)))
	}
	return nil
}

// allRemote reports whether every source is a gs:// URL: a copy between GCS locations.
func allRemote(srcs []string) bool {
	for _, s := range srcs {
		if !isRemote(s) {
			return false
		}
	}
	return true
}

// readSourceList reads -I's list from stdin: one source per line, blank lines ignored.
func readSourceList(a *app, ops []string) ([]string, error) {
	if len(ops) != 1 {
		return nil, usagef("with -I, give only the destination; the sources come from standard input")
	}
	var srcs []string
	sc := bufio.NewScanner(a.stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if line == "-" {
			return nil, usagef("-I: \"-\" cannot be a source when standard input holds the list")
		}
		srcs = append(srcs, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("-I: reading the source list from standard input: %w", err)
	}
	if len(srcs) == 0 {
		return nil, usagef("-I: standard input held no sources (one path per line)")
	}
	return srcs, nil
}
