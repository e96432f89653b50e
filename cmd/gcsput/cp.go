package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gcsput/gcsput/internal/jobrec"
	"github.com/gcsput/gcsput/internal/manifest"
	"github.com/gcsput/gcsput/internal/naming"
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

	identity     *jobrec.Identity // the job the operands name, for the summary
	noDecompress bool             // --do-not-decompress: download gzip-encoded objects as stored
	hold         holdFlags        // --retain-until, --retention-mode, --temporary-hold, --event-based-hold
	manifest     string           // -L, --manifest-path: gcloud's copy manifest, appended; its done sources skipped
	customTime   string           // --custom-time RFC 3339: customTime of the uploaded objects
	customAt     time.Time        // customTime, parsed by check
}

var cpCommand = &command{
	name:    "cp",
	args:    "[flags] SRC... DST",
	summary: "copy files, directories and streams to and from GCS, and objects between buckets",
	help: `Copies local files, directories (-r) and standard input ("-") to GCS, objects and prefixes
(-r) to local paths or standard output ("-"), and objects between buckets (on the server).
Every transfer resumes after a break ('gcsput resume') and is checked by CRC32C.`,
	examples: `
  gcsput cp report.pdf gs://my-bucket/reports/
  gcsput cp -r ./photos gs://my-bucket/                  # gs://my-bucket/photos/...
  gcsput cp 'gs://my-bucket/logs/2024-*.gz' ./logs/      # quoted: gcsput expands it
  gcsput cp -j 16 --skip-unchanged -r /srv/data gs://backups/nightly/
  tar cz /etc | gcsput cp - gs://backups/etc.tgz
  gcsput cp -r gs://my-bucket/photos gs://archive/2024/
`,
	see: `docs/cli.md for destination names, docs/copy.md for copies between buckets,
docs/composite.md for large files, docs/wildcards.md for wildcards; docs/commands.md#gcsput-cp for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		f := &cpFlags{}
		fs.Group("Transfer")
		fs.Bool(&f.recursive, "recursive", "r", "copy directories and prefixes with everything under them")
		fs.Alias("R", "recursive")
		fs.Group("Preconditions")
		fs.Bool(&f.noClobber, "no-clobber", "n", "never overwrite: skip destinations that exist\n"+"never overwrite: skip objects (or local files) that already exist")
		fs.Bool(&f.skipUnchanged, "skip-unchanged", "", "skip files whose size and CRC32C match the object\n"+"skip files whose size and CRC32C match the existing object")
		fs.Group("Transfer")
		fs.String(&f.manifest, "manifest-path", "L", "FILE", "append a CSV row per item to FILE; skip what it has done\n"+"append a CSV row per item to FILE (gcloud's and gsutil's manifest: source, destination, times, size, result) and skip the sources it records as OK or skip, so a rerun sends only the rest")
		fs.Group("Destination metadata")
		fs.List(&f.headers, "header", "h", "'NAME: VALUE'", "set a header on uploads (repeatable)\n"+"set a header on uploaded objects, e.g. -h 'Cache-Control: no-cache' (repeatable)")
		fs.List(&f.metadata, "metadata", "", "KEY=VALUE", "set custom metadata on uploads (repeatable)\n"+"set custom metadata on uploaded objects (repeatable; KEY= with no value sets nothing)")
		fs.String(&f.contentType, "content-type", "", "TYPE", "content type of uploads (default: by extension)\n"+"content type of uploaded objects (default: from the file extension)")
		fs.Bool(&f.preservePosix, "preserve-posix", "P", "keep mtime and mode, and restore them on download\n"+"keep mtime and mode in object metadata and restore them on download")
		fs.Group("Transfer")
		fs.Bool(&f.fromStdin, "stdin-list", "I", "read the sources from standard input, one per line")
		fs.Group("Preconditions")
		fs.Generation(&f.ifGen, "if-generation-match", "", "GEN", "write only over generation GEN (0: only if absent)\n"+"upload (or copy) one file or object only if the destination's live generation is GEN; 0: only if it does not exist (it fails if it does; -n skips it instead)")
		fs.Group("Destination metadata")
		fs.String(&f.gzipExts, "gzip-ext", "z", "EXT,...", "store files with these extensions gzip-compressed\n"+"store files with these extensions gzip-compressed, with Content-Encoding: gzip (downloads decompress them after checking the stored bytes), e.g. -z html,css,js")
		fs.Bool(&f.gzipAll, "gzip", "Z", "store every uploaded file gzip-compressed\n"+"store every uploaded file gzip-compressed, with Content-Encoding: gzip (downloads decompress them)")
		fs.Group("Transfer")
		fs.Bool(&f.allVersions, "all-versions", "A", "copy every generation of gs:// sources, oldest first\n"+"copy every generation of gs:// sources, noncurrent ones first, in order (a destination bucket with versioning keeps the history), as gsutil and gcloud cp -A")
		fs.Bool(&f.noDecompress, "do-not-decompress", "", "download gzip-encoded objects as stored\n"+"download objects stored with Content-Encoding: gzip as stored, compressed (as gcloud's flag of that name)")
		fs.Group("Destination metadata")
		fs.String(&f.storageClass, "storage-class", "s", "CLASS", "storage class of new objects (default: the bucket's)\n"+"storage class of uploaded (or copied) objects: STANDARD, NEARLINE, COLDLINE or ARCHIVE (default: the bucket's; a copy: the source's)")
		fs.String(&f.customTime, "custom-time", "", "TIME", "customTime of uploaded objects (RFC 3339)\n"+"set the customTime of uploaded objects (RFC 3339, e.g. 2026-01-02T15:04:05Z), as gcloud's --custom-time; lifecycle rules read it")
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
	f.identity = jobrec.NewIdentity("cp", srcs, dst, f.transfer.shard.Count, nil)
	o := f.options(a)
	// The operands are checked before connecting: a typo must not wait for credentials.
	if err := upload.CheckCopyAll(srcs, dst, o); err != nil {
		return libError(err)
	}
	if err := f.headersCheck(srcs, dst); err != nil {
		return err
	}
	if len(srcs) == 1 && srcs[0] == "-" && naming.IsRemote(dst) && f.transfer.chunkSize > resumable.MaxStreamChunkSize {
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
	case !naming.IsRemote(dst):
		return usagef("-h, --metadata and --content-type apply to uploads; to change an object's metadata use 'gcsput meta set'")
	case naming.AllRemote(srcs):
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
	if err := manifest.Check(f.manifest); err != nil {
		return usagef("-L %v", err)
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
