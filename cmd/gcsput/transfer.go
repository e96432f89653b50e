package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"

	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/walk"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

// parseRemote parses a gs:// operand with the upload package's parser, which validates
// the bucket and object names; a bad name is a usage error that says what is wrong.
func parseRemote(op string) (remoteURL, error) {
	u, err := upload.ParseURL(op)
	if err != nil {
		return remoteURL{}, usagef("%v", err)
	}
	return remoteURL{bucket: u.Bucket, object: u.Object}, nil
}

func (u remoteURL) lib() upload.URL { return upload.URL{Bucket: u.bucket, Object: u.object} }

// probe asks whether any object exists under gs://bucket/prefix: one listing request.
func (j *job) probe(ctx context.Context, bucket, prefix string) (bool, error) {
	for _, err := range j.client.List(ctx, bucket, prefix, "/") {
		if err != nil {
			return false, fmt.Errorf("gs://%s/%s: %w", bucket, prefix, err)
		}
		return true, nil
	}
	return false, nil
}

func (f *cpFlags) jobConfig() jobConfig {
	return jobConfig{remote: &f.remote, transfer: &f.transfer, stateDir: f.state.stateDir, identity: f.identity,
		manifest: f.manifest}
}

func (f *cpFlags) uploadOptions() upload.UploadOptions {
	h, _ := parseHeaders(f.headers, f.metadata, f.contentType) // checked in cpFlags.check
	holds, _ := f.hold.holds()                                 // checked in cpFlags.check
	return upload.UploadOptions{
		Attrs: upload.Attrs{
			ContentType: h.ContentType, CacheControl: h.CacheControl,
			ContentDisposition: h.ContentDisposition, ContentEncoding: h.ContentEncoding,
			ContentLanguage: h.ContentLanguage, Metadata: h.Metadata,
			StorageClass: f.storageClass,
			Holds:        holds,
			CustomTime:   f.customAt,
		},
		NoClobber:         f.noClobber,
		IfGenerationMatch: f.ifGen,
		SkipUnchanged:     f.skipUnchanged,
		PreservePOSIX:     f.preservePosix,
	}
}

// upload runs cp with a gs:// destination.
func (a *app) upload(ctx context.Context, f *cpFlags, srcs []string, dst string) error {
	u, err := parseRemote(dst)
	if err != nil {
		return err
	}
	// Under -I a missing path is that file's failure, not the batch's: the rest go on.
	var missing []*upload.Result
	if f.fromStdin {
		srcs, missing = splitMissing(srcs, u)
		if len(srcs) == 0 {
			return a.onlyFailures(ctx, f, missing)
		}
	}
	if !f.fromStdin {
		var wild bool
		if srcs, wild, err = a.expandUploadSources(srcs, f.recursive); errors.Is(err, upload.ErrNoMatch) {
			return usagef("%v", err) // as a missing file is
		} else if err != nil {
			return err
		}
		if wild {
			u.object = folderPrefix(u.object) // a wildcard is several sources, whatever it matched
		}
	}
	// Check the local sources before connecting: a typo must not wait for credentials.
	plan, err := planUpload(srcs, u, f.recursive)
	if err != nil {
		return err
	}
	if err := checkUploadCollisions(plan); err != nil {
		return err
	}
	if len(plan) == 1 && plan[0].src.stdin && f.transfer.chunkSize > resumable.MaxStreamChunkSize {
		return usagef("--chunk-size %s is too large for standard input, whose chunk is held in memory: the limit is %s",
			formatSize(f.transfer.chunkSize), formatSize(resumable.MaxStreamChunkSize))
	}
	j, err := a.newJob(ctx, f.jobConfig())
	if err != nil {
		return err
	}
	defer j.close()
	opts := f.uploadOptions()
	if len(plan) == 1 && plan[0].src.stdin {
		r, _ := j.client.UploadReader(ctx, a.stdin, upload.URL{Bucket: plan[0].dst.bucket, Object: plan[0].dst.name}, opts)
		j.add(r)
		return j.finish()
	}
	if len(plan) > 1 || plan[0].src.isDir || f.fromStdin {
		// A batch: a mistyped bucket or a key that may not write is said once, here.
		if ctx, err = j.preflight(ctx, u.bucket, permCreate); err != nil {
			return err
		}
	}
	j.add(missing...)
	// The tree is walked twice and held by neither walk: a first pass counts what there is
	// (the bar's total, and a tree that cannot be read whole is refused before anything
	// moves), a second streams each file to the next free worker.
	if err := j.count(plan); err != nil {
		return err
	}
	var walkErr error
	items := j.stream(plan, &walkErr)
	if rule := parseGzipRule(f.gzipExts, f.gzipAll); rule.active() {
		// -z and -Z hold the list: the compressed copies go up first, the rest after.
		items = slices.Values(j.uploadGzipped(ctx, slices.Collect(items), rule, j.stateDir, opts))
	}
	_ = j.client.UploadSeq(ctx, items, opts) // each result went to j.add as it ended
	if walkErr != nil {
		return walkErr
	}
	err = j.finish()
	if stopped := j.stop.err(); stopped != nil {
		return stopped
	}
	return err
}

// splitMissing takes out of an -I list the paths that do not exist, as failed results.
func splitMissing(srcs []string, dst remoteURL) (present []string, missing []*upload.Result) {
	for _, s := range srcs {
		if _, err := os.Lstat(s); err != nil {
			missing = append(missing, &upload.Result{Source: s, Dest: dst.String(), Status: upload.StatusFailed,
				Err: fmt.Errorf("%s: %w", s, errors.Unwrap(err))})
			continue
		}
		present = append(present, s)
	}
	return present, missing
}

// onlyFailures reports a batch in which nothing could be started.
func (a *app) onlyFailures(ctx context.Context, f *cpFlags, failed []*upload.Result) error {
	j, err := a.newJob(ctx, f.jobConfig())
	if err != nil {
		return err
	}
	defer j.close()
	j.add(failed...)
	return j.finish()
}

// count puts every file of the plan (this shard's) into the bar's total, keeping none of
// them; a directory that cannot be read is a usage error before anything is sent.
func (j *job) count(plan []uploadItem) error {
	for _, it := range plan {
		if !it.src.isDir {
			if fi, err := os.Stat(it.src.path); err == nil && j.shard.Owns(it.dst.name) {
				j.prog.addTotal(fi.Size())
				j.client.Expect(1, fi.Size())
			}
			continue
		}
		err := walk.Each(it.src.path, func(e walk.Entry) error {
			if e.Skip == "" && e.Err == nil && j.shard.Owns(naming.ObjectName(it.dst.name, e.Rel)) {
				j.prog.addTotal(e.Info.Size())
				j.client.Expect(1, e.Info.Size())
			}
			return nil
		})
		if err != nil {
			return usagef("%s: %v", it.src.path, err)
		}
	}
	return nil
}

// stream yields the plan's files as the walk reaches them (this shard's only); entries
// that cannot be uploaded are reported at once. A walk that fails (the tree changed
// since it was counted) ends the stream and sets *walkErr.
func (j *job) stream(plan []uploadItem, walkErr *error) iter.Seq[upload.Item] {
	return func(yield func(upload.Item) bool) {
		for _, it := range plan {
			if !it.src.isDir {
				u := upload.URL{Bucket: it.dst.bucket, Object: it.dst.name}
				if !j.shard.Owns(u.Object) {
					continue
				}
				j.expectName(u.String(), it.src.path)
				if !yield(upload.Item{Local: it.src.path, Remote: u}) {
					return
				}
				continue
			}
			stop := errors.New("stopped")
			err := walk.Each(it.src.path, func(e walk.Entry) error {
				u := upload.URL{Bucket: it.dst.bucket, Object: naming.ObjectName(it.dst.name, e.Rel)}
				switch {
				case !j.shard.Owns(u.Object):
				case e.Err != nil:
					j.add(&upload.Result{Source: e.Path, Dest: u.String(), Status: upload.StatusFailed, Err: e.Err})
				case e.Skip != "":
					j.add(&upload.Result{Source: e.Path, Dest: u.String(), Status: upload.StatusSkipped, Note: e.Skip})
				default:
					j.expectName(u.String(), e.Path)
					if !yield(upload.Item{Local: e.Path, Remote: u}) {
						return stop
					}
				}
				return nil
			})
			if errors.Is(err, stop) {
				return
			}
			if err != nil {
				*walkErr = fmt.Errorf("%s: %w", it.src.path, err)
				return
			}
		}
	}
}

func (f *cpFlags) downloadOptions() upload.DownloadOptions {
	// Objects stored gzip-encoded (-z, -Z, gsutil's) arrive decompressed, as gsutil and gcloud write them.
	return upload.DownloadOptions{SkipUnchanged: f.skipUnchanged, NoClobber: f.noClobber, PreservePOSIX: f.preservePosix,
		Decompress: !f.noDecompress}
}

// download runs cp with a local destination (or "-").
func (a *app) download(ctx context.Context, f *cpFlags, srcs []string, dst string) error {
	for _, op := range srcs {
		if dst == "-" && isRemote(op) && upload.HasWildcard(op) {
			return usagef("standard output (\"-\") takes one object, not a wildcard: 'gcsput cat %s' writes every match", op)
		}
	}
	if _, err := planDownload(ctx, srcs, dst, f.recursive, parseRemote, nil); err != nil {
		return err
	}
	if len(f.headers) > 0 || len(f.metadata) > 0 || f.contentType != "" {
		return usagef("-h, --metadata and --content-type apply to uploads; to change an object's metadata use 'gcsput meta set'")
	}
	cfg := f.jobConfig()
	cfg.noState, cfg.dataOnStdout = dst == "-", dst == "-"
	j, err := a.newJob(ctx, cfg)
	if err != nil {
		return err
	}
	defer j.close()
	if f.recursive || len(srcs) > 1 {
		// Listing only: reading may be granted object by object (fine-grained ACLs), which
		// the bucket's permissions do not show.
		if err := j.preflightAll(ctx, remoteBuckets(srcs), permList); err != nil {
			return err
		}
	}
	srcs, wild, err := expandDownloadSources(ctx, j.client, srcs, f.recursive)
	if err != nil {
		return err
	}
	plan, err := j.planExpanded(ctx, srcs, wild, dst, f.recursive)
	if err != nil {
		return err
	}
	if wild {
		if err := checkDownloadCollisions(plan); err != nil {
			return err
		}
	}
	if dst == "-" {
		j.add(a.downloadToStdout(ctx, j, plan[0].src.lib(), f.downloadOptions()))
		return j.finish()
	}
	var items []upload.Item
	for _, it := range plan {
		if it.prefix {
			results, err := j.client.DownloadPrefix(ctx, it.src.lib(), it.dst, f.downloadOptions())
			if results == nil && err != nil {
				return err
			}
			continue // each result went to j.add as it ended
		}
		items = append(items, upload.Item{Local: it.dst, Remote: it.src.lib()})
	}
	if len(items) > 0 {
		_, _ = j.client.DownloadObjects(ctx, items, f.downloadOptions()) // results: j.add, as they ended
	}
	return j.finish()
}

// remoteBuckets lists the buckets of the gs:// operands, in order (parsed, and checked,
// by planDownload before).
func remoteBuckets(ops []string) []string {
	var out []string
	for _, op := range ops {
		if u, err := parseRemote(op); err == nil {
			out = append(out, u.bucket)
		}
	}
	return out
}

// downloadToStdout streams src to stdout (decompressed when it is stored gzip-encoded),
// resumed after breaks and checked against its CRC32C at the end. A mismatch can only be
// reported once the bytes are out: the record says failed and the exit code is 1, so a
// pipeline must check it ('set -o pipefail').
func (a *app) downloadToStdout(ctx context.Context, j *job, src upload.URL, o upload.DownloadOptions) *upload.Result {
	r, _ := j.client.DownloadWriter(ctx, src, a.stdout, upload.DownloadOptions{Decompress: o.Decompress})
	return r
}

// planExpanded plans the download of srcs to dst, srcs being the operands with their
// wildcards expanded (wild: a pattern made them several sources). A wildcard is several
// sources, whatever it matched: the destination is then a directory, so a rerun names the
// same files, and what it matched is known to be an object or a folder: no probe asks again.
func (j *job) planExpanded(ctx context.Context, srcs []string, wild bool, dst string, recursive bool) ([]downloadItem, error) {
	probe := j.probe
	if wild {
		if !isLocalContainerSyntax(dst) {
			dst += string(filepath.Separator)
		}
		probe = nil
	}
	return planDownload(ctx, srcs, dst, recursive, parseRemote, probe)
}
