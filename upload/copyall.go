package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/shard"
	"github.com/gcsput/gcsput/internal/walk"
)

// CopyAllOptions configure [Client.CopyAll]. The zero value copies files and
// objects (not directories or prefixes) over whatever the destination holds.
type CopyAllOptions struct {
	// Recursive copies directories and prefixes (a source ending in "/", a
	// bucket, or a name with objects under "name/") with everything under
	// them; without it such a source is an ErrBadOperand error.
	Recursive bool
	// NoClobber never overwrites: an object that exists is skipped (the
	// upload or copy is conditional on there being none), and so is a local
	// file that exists.
	NoClobber bool
	// SkipUnchanged skips a destination with the source's size and CRC32C.
	SkipUnchanged bool
	// IfGenerationMatch, when set, writes one uploaded file or stream, or
	// one copied object, only over that live generation (0: only if the
	// destination does not exist). It takes one source, not Recursive nor
	// NoClobber.
	IfGenerationMatch *int64
	// PreservePOSIX keeps mtime and mode in the objects' metadata and
	// restores them on download (not for copies between gs:// locations).
	PreservePOSIX bool
	// AllVersions copies every generation of gs:// sources, noncurrent ones
	// first, in order; between gs:// locations only, without NoClobber,
	// IfGenerationMatch or SkipUnchanged.
	AllVersions bool
	// Attrs are the metadata of uploaded objects; a copy between gs://
	// locations takes only StorageClass and Holds (it keeps its source's
	// metadata; the other fields, KMSKeyName included, are an ErrBadOperand
	// error), a download none.
	Attrs Attrs
	// GzipExtensions ("html", "css") and GzipAll store the uploaded files
	// they take gzip-compressed, with Content-Encoding: gzip and the
	// content's size and CRC32C in metadata (see the docs of -z in cp).
	GzipExtensions []string
	GzipAll        bool
	// NoDecompress downloads objects stored gzip-encoded as stored; by
	// default their content is written, after the stored bytes were checked.
	NoDecompress bool
	// Stdin is what the source "-" reads, Stdout what the destination "-"
	// writes; "-" is an ErrBadOperand error when the one it needs is nil.
	Stdin  io.Reader
	Stdout io.Writer
	// Listed says the sources are a list (cp -I): a missing one is that
	// file's failure, reported as a Result, not the call's error, and no
	// wildcard is expanded.
	Listed bool
	// OnOmit, if set, is told of each directory a local wildcard matched
	// that is omitted because Recursive is not set.
	OnOmit func(dir, pattern string)
	// DiscardResults returns no results: each still goes to
	// Options.OnResult as it ends, and a walk of millions of files holds
	// none of them.
	DiscardResults bool
	// Encryption, when set, is the keys of this call: they replace the
	// Client's (Options.EncryptionKey, KMSKeyName, DecryptionKeys) for
	// every upload, download and copy it makes. nil: the Client's. See
	// Encryption.
	Encryption *Encryption
}

// CopyAll copies srcs to dst as 'gcsput cp' does: local paths, "-"
// (Stdin) and gs:// URLs, with gsutil's wildcards, to a gs:// URL
// (uploads, or copies on the server between gs:// locations) or to a local
// path or "-" (Stdout, downloads). Destinations are named by the rules of
// gsutil's cp from the operands alone (see the package docs): a
// destination ending in "/" is a folder, several sources or a wildcard
// make it one.
//
// Everything that can be checked without a request (operands, names, two
// sources landing on one name) is checked first; then, for a batch
// (several sources, Recursive, Listed), the bucket is asked once whether it
// exists and whether these credentials may write (or list) there. Those
// refusals are errors matching ErrBadOperand or ErrRefused, and nothing was
// sent. An upload batch whose bucket could not be asked stops at its first
// 403 or 404 (an error matching ErrBatchStopped).
//
// Each result goes to Options.OnResult as it ends, and is returned in the
// order they ended (unless DiscardResults). The error is then nil when
// every transfer succeeded or was skipped, else one matching ErrSomeFailed
// (and ctx.Err() when ctx ended). Any other error ended the call before
// its transfers, or when a directory walk or a listing failed.
func (c *Client) CopyAll(ctx context.Context, srcs []string, dst string, o CopyAllOptions) ([]*Result, error) {
	// An upload's local sources are planned once, by copyUp, which checks
	// them as CheckCopyAll does: a wildcard with "**" is a walk of the tree.
	if err := checkCopyAll(srcs, dst, o, false); err != nil {
		return nil, err
	}
	ctx, err := c.withKeys(ctx, o.Encryption, "CopyAllOptions")
	if err != nil {
		return nil, err
	}
	h := &callHook{keep: !o.DiscardResults, originals: map[string]string{}}
	ctx = withHook(ctx, h)
	switch {
	case naming.IsRemote(dst) && naming.AllRemote(srcs):
		err = c.copyRemote(ctx, h, srcs, dst, o)
	case naming.IsRemote(dst):
		err = c.copyUp(ctx, h, srcs, dst, o)
	default:
		err = c.copyDown(ctx, h, srcs, dst, o)
	}
	return h.end(ctx, err)
}

// end is the outcome of a call whose transfers ran, err being what ended it
// early (a walk, a listing), if anything.
func (h *callHook) end(ctx context.Context, err error) ([]*Result, error) {
	h.mu.Lock()
	results := h.results
	h.mu.Unlock()
	if err != nil {
		return results, err
	}
	if err := h.stop.err(); err != nil {
		return results, err
	}
	return results, h.fails.orNil(ctx)
}

// CheckCopyAll is what CopyAll checks before any request: the operands
// (local sources exist, names parse, "-" alone), the options that apply to
// them, and the destinations they name (two sources may not land on one).
// Local wildcards are expanded; gs:// ones are checked when CopyAll lists
// them. It returns nil or an error matching ErrBadOperand.
func CheckCopyAll(srcs []string, dst string, o CopyAllOptions) error {
	return checkCopyAll(srcs, dst, o, true)
}

// checkCopyAll is CheckCopyAll; planLocal plans an upload's local sources
// (CopyAll leaves that to copyUp, which plans them once).
func checkCopyAll(srcs []string, dst string, o CopyAllOptions, planLocal bool) error {
	if len(srcs) == 0 {
		return badOperand("need a source and a destination, e.g. 'gcsput cp file.txt gs://bucket/'")
	}
	for _, op := range append(slices.Clip(srcs), dst) {
		if err := checkTypo(op); err != nil {
			return err
		}
	}
	if o.IfGenerationMatch != nil && (len(srcs) != 1 || o.Recursive || !naming.IsRemote(dst) || o.NoClobber) {
		return badOperand("--if-generation-match applies to one uploaded file or stream, or one copied object, without -r or -n")
	}
	if o.AllVersions && (!naming.IsRemote(dst) || !naming.AllRemote(srcs) || o.NoClobber || o.IfGenerationMatch != nil || o.SkipUnchanged) {
		return badOperand("-A copies every generation between gs:// locations (a download or upload has one), without -n, --if-generation-match or --skip-unchanged")
	}
	if !o.Attrs.CustomTime.IsZero() && (!naming.IsRemote(dst) || naming.AllRemote(srcs)) {
		return badOperand("--custom-time sets the customTime of the objects an upload writes; a download writes none, and a copy between buckets keeps the source's")
	}
	switch {
	case naming.IsRemote(dst) && naming.AllRemote(srcs):
		return checkRemoteCopy(srcs, dst, o)
	case naming.IsRemote(dst) && !planLocal:
		return nil
	case naming.IsRemote(dst):
		plan, _, err := planUp(srcs, dst, o, nil)
		if err != nil {
			return err
		}
		return checkUpPlan(srcs, plan, o)
	}
	for _, op := range srcs {
		if dst == "-" && naming.IsRemote(op) && HasWildcard(op) {
			return badOperand("standard output (\"-\") takes one object, not a wildcard: 'gcsput cat %s' writes every match", op)
		}
	}
	if _, err := planDownload(context.Background(), srcs, dst, o.Recursive, nil); err != nil {
		return err
	}
	if o.Attrs.hasContent() {
		return badOperand("-h, --metadata and --content-type apply to uploads; to change an object's metadata use 'gcsput meta set'")
	}
	if dst == "-" && o.Stdout == nil {
		return badOperand("standard output (\"-\") needs CopyAllOptions.Stdout")
	}
	return nil
}

// hasContent reports whether a sets anything only an upload writes.
func (a Attrs) hasContent() bool {
	return a.ContentType != "" || a.CacheControl != "" || a.ContentDisposition != "" || a.ContentEncoding != "" ||
		a.ContentLanguage != "" || len(a.Metadata) > 0
}

// checkRemoteCopy refuses the upload-only options in a copy between gs://
// locations, and checks its operands.
func checkRemoteCopy(srcs []string, dst string, o CopyAllOptions) error {
	switch {
	case o.Attrs.hasContent():
		return badOperand("-h, --metadata and --content-type apply to uploads; a copy keeps its source's metadata: change it after with 'gcsput meta set'")
	case len(o.GzipExtensions) > 0 || o.GzipAll:
		return badOperand("-z and -Z apply to uploads: a copy between gs:// locations keeps the source's bytes")
	case o.PreservePOSIX:
		return badOperand("--preserve-posix applies to uploads and downloads: a copy keeps the source's metadata, POSIX attributes included")
	case o.Attrs.KMSKeyName != "":
		// A copy takes only StorageClass and Holds of Attrs: the key would be dropped.
		return badOperand("CopyAllOptions.Attrs.KMSKeyName applies to uploads: a copy between gs:// locations is written under the Client's key (Options.KMSKeyName or EncryptionKey)")
	}
	u, err := parseOperand(dst)
	if err != nil {
		return err
	}
	_, err = planCopy(context.Background(), srcs, u, o.Recursive, nil)
	return err
}

// checkUpPlan refuses IfGenerationMatch for an upload whose sources
// expanded to anything but one file or stream.
func checkUpPlan(srcs []string, plan []upItem, o CopyAllOptions) error {
	if o.IfGenerationMatch != nil && (len(plan) != 1 || plan[0].src.isDir) {
		return oneGeneration(srcs[0], len(plan))
	}
	return nil
}

// planUp expands and checks the local sources of an upload and names their
// destinations; under Listed the missing ones come back as failed results.
func planUp(srcs []string, dst string, o CopyAllOptions, omit func(dir, pattern string)) ([]upItem, []*Result, error) {
	u, err := parseOperand(dst)
	if err != nil {
		return nil, nil, err
	}
	var missing []*Result
	if o.Listed {
		srcs, missing = splitMissing(srcs, u)
		if len(srcs) == 0 {
			return nil, missing, nil
		}
	} else {
		var wild bool
		if srcs, wild, err = expandLocalSources(srcs, o.Recursive, omit); err != nil {
			return nil, nil, err
		}
		if wild {
			u.Object = naming.Folder(u.Object) // a wildcard is several sources, whatever it matched
		}
	}
	plan, err := planUpload(srcs, u, o.Recursive)
	if err != nil {
		return nil, nil, err
	}
	if err := checkUploadCollisions(plan); err != nil {
		return nil, nil, err
	}
	if len(plan) == 1 && plan[0].src.stdin && o.Stdin == nil {
		return nil, nil, badOperand("standard input (\"-\") needs CopyAllOptions.Stdin")
	}
	return plan, missing, nil
}

// splitMissing takes out of a listed batch the paths that do not exist, as failed results.
func splitMissing(srcs []string, dst URL) (present []string, missing []*Result) {
	for _, s := range srcs {
		if _, err := os.Lstat(s); err != nil {
			missing = append(missing, &Result{Source: s, Dest: dst.String(), Status: StatusFailed,
				Err: fmt.Errorf("%s: %w", s, errors.Unwrap(err))})
			continue
		}
		present = append(present, s)
	}
	return present, missing
}

// oneGeneration refuses --if-generation-match for a wildcard that matched n
// sources (or a folder): the generation is one object's, and as every
// copy's precondition it would let one of them overwrite that object.
func oneGeneration(op string, n int) error {
	return badOperand("--if-generation-match applies to one file or object, and %s matches %s: copy the one object by its name", op, plural(n, "source"))
}

// uploadOptions are the options of CopyAll's uploads.
func (o CopyAllOptions) uploadOptions() UploadOptions {
	return UploadOptions{Attrs: o.Attrs, NoClobber: o.NoClobber, IfGenerationMatch: o.IfGenerationMatch,
		SkipUnchanged: o.SkipUnchanged, PreservePOSIX: o.PreservePOSIX}
}

// copyUp uploads local sources to a gs:// destination.
func (c *Client) copyUp(ctx context.Context, h *callHook, srcs []string, dst string, o CopyAllOptions) error {
	plan, missing, err := planUp(srcs, dst, o, o.OnOmit)
	if err != nil {
		return err
	}
	if err := checkUpPlan(srcs, plan, o); err != nil {
		return err
	}
	if len(plan) == 0 { // listed, and none exists: nothing to ask the bucket about
		for _, r := range missing {
			c.tell(ctx, r)
		}
		return nil
	}
	opts := o.uploadOptions()
	if len(plan) == 1 && plan[0].src.stdin {
		r, _ := c.UploadReader(ctx, o.Stdin, plan[0].dst, opts)
		c.tell(ctx, r)
		return nil
	}
	sh, _ := shard.Parse(c.opts.Shard)
	// The tree is walked twice and held by neither walk: a first pass counts
	// what there is (a tree that cannot be read whole is refused before
	// anything moves), a second streams each file to the next free worker.
	// The count runs while the bucket is asked (preflight): both must pass
	// before the first file starts, and neither waits for the other.
	count := c.startCount(plan, sh)
	if len(plan) > 1 || len(plan) == 1 && plan[0].src.isDir || o.Listed {
		// A batch: a mistyped bucket or a key that may not write is said once, here.
		u, _ := ParseURL(dst)
		if ctx, err = c.preflight(ctx, h, u.Bucket, permCreate); err != nil {
			count.abandon()
			return err
		}
	}
	for _, r := range missing {
		c.tell(ctx, r)
	}
	if err := count.wait(); err != nil {
		return err
	}
	var walkErr error
	items := c.streamUp(ctx, plan, sh, &walkErr)
	if rule := parseGzipRule(o.GzipExtensions, o.GzipAll); rule.active() {
		// Gzip holds the list: the compressed copies go up first, the rest after.
		items = slices.Values(c.uploadGzipped(ctx, h, slices.Collect(items), rule, opts))
	}
	_ = c.UploadSeq(ctx, items, opts) // each result was counted by the hook
	return walkErr
}

// countUp tells the meter every file of the plan (this shard's), keeping
// none of them; a directory that cannot be read is an ErrBadOperand error
// before anything is sent.
func (c *Client) countUp(plan []upItem, sh shard.Spec) error {
	return c.startCount(plan, sh).wait()
}

// upCount is countUp running beside the caller (see startCount).
type upCount struct {
	m     *meter
	stop  atomic.Bool
	done  chan error
	files int   // what the walk told the meter: read after done
	bytes int64 // (see abandon)
}

// startCount runs countUp's walk on a goroutine of its own, so that the
// tree is counted while a request is in flight; wait or abandon collects it.
func (c *Client) startCount(plan []upItem, sh shard.Spec) *upCount {
	u := &upCount{m: c.meter, done: make(chan error, 1)}
	tell := func(size int64) {
		c.Expect(1, size)
		u.files, u.bytes = u.files+1, u.bytes+size
	}
	go func() {
		for _, it := range plan {
			if !it.src.isDir {
				if fi, err := os.Stat(it.src.path); err == nil && sh.Owns(it.dst.Object) {
					tell(fi.Size())
				}
				continue
			}
			err := walk.Each(it.src.path, func(e walk.Entry) error {
				if u.stop.Load() {
					return errCountAbandoned
				}
				if e.Skip == "" && e.Err == nil && sh.Owns(naming.ObjectName(it.dst.Object, e.Rel)) {
					tell(e.Info.Size())
				}
				return nil
			})
			if err != nil {
				u.done <- badOperand("%s: %v", it.src.path, err)
				return
			}
		}
		u.done <- nil
	}()
	return u
}

// errCountAbandoned stops an abandoned count's walk.
var errCountAbandoned = errors.New("upload: count abandoned")

// wait returns the count's error once the walk has ended.
func (u *upCount) wait() error { return <-u.done }

// abandon stops the walk of a batch that will not run, waits for it, and
// takes back from the meter what it counted: a later batch of the same
// Client counts from zero.
func (u *upCount) abandon() {
	u.stop.Store(true)
	<-u.done
	u.m.unexpect(u.files, u.bytes)
}

// streamUp yields the plan's files as the walk reaches them (this shard's
// only); entries that cannot be uploaded are reported at once. A walk that
// fails (the tree changed since it was counted) ends the stream and sets
// *walkErr.
func (c *Client) streamUp(ctx context.Context, plan []upItem, sh shard.Spec, walkErr *error) iter.Seq[Item] {
	return func(yield func(Item) bool) {
		for _, it := range plan {
			if !it.src.isDir {
				if sh.Owns(it.dst.Object) && !yield(Item{Local: it.src.path, Remote: it.dst}) {
					return
				}
				continue
			}
			stop := errors.New("stopped")
			err := walk.Each(it.src.path, func(e walk.Entry) error {
				u := URL{Bucket: it.dst.Bucket, Object: naming.ObjectName(it.dst.Object, e.Rel)}
				switch {
				case !sh.Owns(u.Object):
				case e.Err != nil:
					c.tell(ctx, &Result{Source: e.Path, Dest: u.String(), Status: StatusFailed, Err: e.Err})
				case e.Skip != "":
					c.tell(ctx, &Result{Source: e.Path, Dest: u.String(), Status: StatusSkipped, Note: e.Skip})
				default:
					if !yield(Item{Local: e.Path, Remote: u}) {
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

// copyDown downloads gs:// sources to a local destination (or "-").
func (c *Client) copyDown(ctx context.Context, h *callHook, srcs []string, dst string, o CopyAllOptions) error {
	if o.Recursive || len(srcs) > 1 {
		// Listing only: reading may be granted object by object (fine-grained
		// ACLs), which the bucket's permissions do not show.
		var buckets []string
		for _, op := range srcs {
			if u, err := ParseURL(op); err == nil {
				buckets = append(buckets, u.Bucket)
			}
		}
		if err := c.preflightAll(ctx, buckets, permList); err != nil {
			return err
		}
	}
	plan, err := c.expandDownload(ctx, srcs, dst, o.Recursive, true)
	if err != nil {
		return err
	}
	// Objects stored gzip-encoded arrive decompressed, as gsutil and gcloud write them.
	do := DownloadOptions{SkipUnchanged: o.SkipUnchanged, NoClobber: o.NoClobber, PreservePOSIX: o.PreservePOSIX,
		Decompress: !o.NoDecompress}
	if dst == "-" {
		r, _ := c.DownloadWriter(ctx, plan[0].src, o.Stdout, DownloadOptions{Decompress: do.Decompress})
		c.tell(ctx, r)
		return nil
	}
	var items []Item
	for _, it := range plan {
		if it.prefix {
			if results, err := c.DownloadPrefix(ctx, it.src, it.dst, do); results == nil && err != nil {
				return err
			}
			continue
		}
		items = append(items, Item{Local: it.dst, Remote: it.src})
	}
	if len(items) > 0 {
		_, _ = c.DownloadObjects(ctx, items, do)
	}
	return nil
}

// expandDownload expands the wildcards of gs:// sources and plans their
// download to dst. A wildcard is several sources, whatever it matched: the
// destination is then a directory, so a rerun names the same files, and
// what it matched is known to be an object or a folder: no probe asks
// again (sources given as they are still are). collide refuses two matches landing on one path.
func (c *Client) expandDownload(ctx context.Context, srcs []string, dst string, recursive, collide bool) ([]downItem, error) {
	srcs, wild, probe, err := c.expandRemoteSources(ctx, srcs, recursive)
	if err != nil {
		return nil, err
	}
	if wild && !isLocalContainerSyntax(dst) {
		dst += string(filepath.Separator)
	}
	plan, err := planDownload(ctx, srcs, dst, recursive, probe)
	if err != nil {
		return nil, err
	}
	if wild && collide {
		if err := checkDownloadCollisions(plan); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// copyRemote copies gs:// sources to a gs:// destination on the server (rewrite).
func (c *Client) copyRemote(ctx context.Context, h *callHook, srcs []string, dst string, o CopyAllOptions) error {
	u, err := parseOperand(dst)
	if err != nil {
		return err
	}
	op := srcs[0] // as the user typed it, for errors
	// A wildcard is several sources, whatever it matched: the destination is a
	// folder, and what it matched is known to be an object or a folder.
	srcs, wild, probe, err := c.expandRemoteSources(ctx, srcs, o.Recursive)
	if err != nil {
		return err
	}
	if wild {
		u.Object = naming.Folder(u.Object)
	}
	plan, err := planCopy(ctx, srcs, u, o.Recursive, probe)
	if err != nil {
		return err
	}
	if o.IfGenerationMatch != nil && (len(plan) != 1 || plan[0].prefix) {
		return oneGeneration(op, len(plan))
	}
	if err := checkCopyCollisions(plan); err != nil {
		return err
	}
	co := CopyOptions{NoClobber: o.NoClobber, StorageClass: o.Attrs.StorageClass, SkipUnchanged: o.SkipUnchanged,
		IfGenerationMatch: o.IfGenerationMatch, Holds: o.Attrs.Holds}
	var items []CopyItem
	for _, it := range plan {
		if o.AllVersions {
			// Every generation, in order.
			if results, err := c.CopyVersions(ctx, it.src, it.dst, co); results == nil && err != nil {
				return err
			}
			continue
		}
		if it.prefix {
			if results, err := c.CopyPrefix(ctx, it.src, it.dst, co); results == nil && err != nil {
				return err
			}
			continue
		}
		items = append(items, CopyItem{Src: it.src, Dst: it.dst})
	}
	if len(items) > 0 {
		_, _ = c.CopyObjects(ctx, items, co)
	}
	return nil
}
