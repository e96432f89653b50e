package upload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/gcsput/gcsput/internal/filter"
	"github.com/gcsput/gcsput/internal/naming"
)

// Sync lives in this package, not in one beside it, because a sync is a
// batch like UploadDir and DownloadPrefix: its outcomes are Results given to
// the same Options.OnResult, its copies draw on the Client's Parallelism,
// state directory and retries, and its share of a sharded job is the
// Client's Options.Shard. A package of its own would need a second result
// callback and the reserved-name and gzip rules re-exported (and could not
// be called "sync" beside the standard library's).

// A Side is a place that may be local or remote: one end of a sync (a
// local directory, or every object under a gs:// prefix) or of a move (a
// local file or one object, see [MoveItem]). Places that can only be
// remote are a [URL], places that can only be local a string path. Make
// one with [LocalSide], [RemoteSide] or [ParseSide]; the zero Side is
// neither, and a sync or move given one fails with ErrBadOption.
//
// A sync reads both sides the same way whatever the direction: each as a
// stream in the order GCS lists names, merged (see [Client.Sync] on
// memory). Copying and deleting are each side's own (an
// upload, a download, an object or a file deleted), so a kind of side or a
// pair not supported yet (gs:// to gs://) is one case to add, not a
// direction to rewrite.
type Side struct {
	dir    string // a local directory, as given
	url    URL    // a prefix (treated as a folder), when remote
	remote bool
}

// LocalSide is the local path p: a directory for a sync, a file for a move.
func LocalSide(p string) Side { return Side{dir: p} }

// RemoteSide is u: for a sync every object under it (u.Object is a folder,
// "backup" meaning "backup/", "" the whole bucket), for a move one object.
func RemoteSide(u URL) Side { return Side{url: u, remote: true} }

// ParseSide reads a sync operand as the gcsput command does: "gs://bucket"
// or "gs://bucket/prefix" is a [RemoteSide], anything else a [LocalSide]. A
// near miss of the scheme ("gs:/b", "GS://b", "gcs://b") is an error
// matching ErrBadName that suggests the right spelling, not a local path.
func ParseSide(s string) (Side, error) {
	if naming.IsURL(s) {
		u, err := ParseURL(s)
		if err != nil {
			return Side{}, err
		}
		return RemoteSide(u), nil
	}
	return LocalSide(s), nil
}

// IsRemote reports whether s is a gs:// prefix.
func (s Side) IsRemote() bool { return s.remote }

// Dir is a local side's path (a sync's directory, a move's file); "" for a
// remote side.
func (s Side) Dir() string { return s.dir }

// URL is a remote side's bucket and prefix, as given; the zero URL for a
// local side.
func (s Side) URL() URL { return s.url }

// String is the side as the user gave it: the directory, or gs://bucket/prefix.
func (s Side) String() string {
	if s.remote {
		return s.url.String()
	}
	return s.dir
}

// noun is what a side holds, for messages.
func (s Side) noun() string {
	if s.remote {
		return "object"
	}
	return "file"
}

// prefix is a remote side's object prefix, as a folder.
func (s Side) prefix() string { return naming.Folder(s.url.Object) }

// SyncOptions are the choices of one [Client.Sync] or [Client.PlanSync].
// The zero value copies what the destination lacks or holds differently,
// compared by size and CRC32C, and deletes nothing.
type SyncOptions struct {
	// Delete removes from the destination the entries the source lacks:
	// only after a sync in which nothing failed (see ErrDeletesWithheld),
	// and within the delete guard (MaxDelete, ErrDeleteGuard). An object
	// is deleted only at the generation that was listed.
	Delete bool

	// MaxDelete bounds Delete; see [MaxDelete]. The zero value is the
	// default: half of the destination's entries, or DefaultDeleteFloor if
	// that is more, and never every entry of a destination that shares no
	// path with the source.
	MaxDelete MaxDelete

	// CompareMTime compares entries by size and modification time (an
	// object's goog-reserved-file-mtime, else its update time, in whole
	// seconds) instead of size and CRC32C, so that no local file is read
	// to checksum it.
	CompareMTime bool

	// Include and Exclude are globs on the path below the sides ("/"
	// separators), by rclone's rules: includes first, the first match
	// decides, any include excludes what matches none; "*" stays inside a
	// path element, "**" crosses them, a leading "/" anchors at the root, a
	// pattern without "/" matches a name in any directory. ExcludeRegexp
	// are Go regular expressions (RE2) matched from the start of the path,
	// as gsutil rsync's -x matches its Python ones: ".*\.tmp$". The rules
	// apply to both sides: what they leave out is neither copied nor
	// deleted. A bad pattern fails the sync with ErrBadOption.
	Include       []string
	Exclude       []string
	ExcludeRegexp []string

	// NoClobber never replaces what the destination holds: an entry it
	// has, alike or not, is left alone and reported skipped ("exists"),
	// without reading it to compare (gcloud storage rsync --no-clobber).
	NoClobber bool

	// SkipIfDestNewer leaves alone an entry whose destination copy is newer
	// than the source's, reported skipped ("destination is newer"), as
	// gcloud storage rsync -u does: the mtimes compared are a file's
	// modification time and an object's goog-reserved-file-mtime (what
	// gsutil, gcloud and sync store), else its update time, in whole
	// seconds. An entry whose destination is as old or older is compared
	// as usual.
	SkipIfDestNewer bool

	// IgnoreSymlinks skips every symlink of a local source, to a file or
	// not, reported skipped; by default a symlink to a file is copied with
	// its target's content, as gsutil rsync copies it (gcloud storage
	// rsync ignores symlinks by default). What the destination holds under
	// a skipped link's name is kept, as for any entry the walk skips.
	IgnoreSymlinks bool

	// CustomTime, when set, is the customTime of every object a sync up
	// writes (gcloud storage rsync --custom-time); a sync that writes no
	// object (down, or gs:// to gs://, whose copies keep the source's) is
	// refused with ErrBadOption.
	CustomTime time.Time

	// OnPlan, if set, is given the plan of Sync once both sides are read
	// and the delete guard has let it through, before anything is copied or
	// deleted: a program can show it, or size a progress bar by it. It is
	// called once, on the caller's goroutine.
	//
	// The plan's Copies and Deletes hold the items when each list fits in
	// memory (DefaultSpillAt); beyond that they are nil and the items are
	// on disk: AllCopies and AllDeletes read them either way, until OnPlan
	// returns. NumCopies, NumDeletes and Bytes count them.
	OnPlan func(*SyncPlan)

	// Holds are the holds and retention every object the sync writes is
	// created under (uploads and copies); none when zero. An object the
	// sync would replace or delete while a hold or retention keeps it is
	// that entry's failure, matching ErrRetained, never retried.
	Holds Holds

	// spillAt replaces DefaultSpillAt, and stats is told how the plan
	// was held (tests).
	spillAt int
	stats   *syncStats
	// Encryption, when set, is the keys of this call: they replace the
	// Client's (Options.EncryptionKey, KMSKeyName, DecryptionKeys) for
	// what it compares (a CSEK object's CRC32C), the key the destination
	// must be under, and every upload, download and copy it makes. nil: the Client's. See
	// Encryption.
	Encryption *Encryption
}

// syncStats is what a test sees of how a sync held its plan.
type syncStats struct {
	liveHigh             int           // most entries held at once by the merge
	copiesMem, delsMem   int           // items of each list held in memory
	copiesDisk, delsDisk bool          // whether each list went to disk
	modes                []fs.FileMode // of the files they went to
}

// SyncPlan is what a sync will do, or with [Client.PlanSync] would do.
// Only the changes are listed: the unchanged entries are counted.
type SyncPlan struct {
	Source, Dest Side
	// Copies are the source entries the destination lacks or holds
	// differently, in name order (bytes of the path, as GCS lists); Bytes
	// is their size. NumCopies counts them.
	Copies    []SyncItem
	Bytes     int64
	NumCopies int
	// Deletes are, with Delete, the destination entries the source lacks
	// (in this shard), in name order. NumDeletes counts them.
	Deletes    []SyncItem
	NumDeletes int
	// Unchanged counts the entries both sides hold alike.
	Unchanged int
	// Kept counts the entries left as the destination holds them by
	// NoClobber or SkipIfDestNewer, perhaps unlike the source's.
	Kept int
	// Failed counts the entries that failed while the sides were read (a
	// file that cannot be read to checksum it, an object whose name cannot
	// be a local path); each was given to Options.OnResult.
	Failed int
	// SourceEntries counts the source's entries after the filters, in
	// every shard: copied, unchanged, skipped or failed. DestEntries counts
	// the destination's, in this shard. The delete guard weighs Deletes
	// against them.
	SourceEntries, DestEntries int
	// Refused is the delete guard's refusal (a *DeleteGuardError), nil
	// when the deletes may run. Sync returns it without changing anything.
	Refused error
	// Withheld says why the deletes would be withheld though the guard
	// allows them (a failure while reading the sides); "" when they would
	// run if the copies succeed.
	Withheld string

	// copies and deletes are the lists as written down, partly on disk.
	copies, deletes *planList
	run             *syncRun
}

// AllCopies yields the planned copies in order, from memory or from the
// file they went to; a read error of that file is yielded last.
func (p *SyncPlan) AllCopies() iter.Seq2[SyncItem, error] { return p.items(p.copies, p.Copies, false) }

// AllDeletes yields the planned deletes as AllCopies yields the copies.
func (p *SyncPlan) AllDeletes() iter.Seq2[SyncItem, error] {
	return p.items(p.deletes, p.Deletes, true)
}

func (p *SyncPlan) items(l *planList, held []SyncItem, del bool) iter.Seq2[SyncItem, error] {
	if l == nil || p.run == nil {
		return func(yield func(SyncItem, error) bool) {
			for _, it := range held {
				if !yield(it, nil) {
					return
				}
			}
		}
	}
	return func(yield func(SyncItem, error) bool) {
		for it, err := range l.all() {
			if err == nil {
				it = p.run.item(it, del)
			}
			if !yield(it, err) {
				return
			}
		}
	}
}

// fill sets Copies and Deletes from the lists written down: every item
// (full, for a dry run) or only lists that stayed in memory.
func (p *SyncPlan) fill(full bool) error {
	p.NumCopies, p.NumDeletes = p.copies.len(), p.deletes.len()
	var errs []error
	for _, x := range []struct {
		l   *planList
		out *[]SyncItem
		all iter.Seq2[SyncItem, error]
	}{{p.copies, &p.Copies, p.AllCopies()}, {p.deletes, &p.Deletes, p.AllDeletes()}} {
		if !full && x.l.spilled() {
			continue
		}
		for it, err := range x.all {
			if err != nil {
				errs = append(errs, err)
				break
			}
			*x.out = append(*x.out, it)
		}
	}
	return errors.Join(errs...)
}

// close removes the files the plan went to.
func (p *SyncPlan) close() {
	if p.copies != nil {
		p.copies.close()
		p.deletes.close()
	}
}

// SyncItem is one planned change.
type SyncItem struct {
	// Path is the entry's path below both sides, with "/" separators.
	Path string
	// Source and Dest name the entry on each side: a local path or a
	// gs:// URL. Source is "" for a delete.
	Source, Dest string
	// Size is the entry's size in bytes: the source's for a copy, the
	// destination's for a delete.
	Size int64

	e *syncEntry
}

// SyncReport counts what a [Client.Sync] did. Each entry was also given
// to Options.OnResult as it ended: copies as an upload's or download's
// Result, unchanged entries as StatusSkipped with Note "unchanged",
// deletions as StatusDeleted (or StatusFailed) with an empty Source.
type SyncReport struct {
	Copied      int   // uploaded, downloaded, copied on the server, resumed or restarted
	Unchanged   int   // both sides alike: nothing sent
	Skipped     int   // not copied for a reason of its own (Result.Note)
	Failed      int   // copies, reads and deletes that failed
	Interrupted int   // stopped by the context's end
	Deleted     int   // destination entries removed
	Bytes       int64 // size of the entries copied
	Transferred int64 // bytes that crossed the network, re-sent ones included
	// DeletesWithheld counts the planned deletes that were not made because
	// something failed or the sync was interrupted; WithheldBecause says
	// which ("2 failures", "the sync was interrupted").
	DeletesWithheld int
	WithheldBecause string
}

// Errors of a sync, besides ErrBadOption, ErrBadName and ErrSomeFailed.
var (
	// ErrDeleteGuard is matched by the *DeleteGuardError of a sync the
	// delete guard refused: nothing was copied or deleted.
	ErrDeleteGuard = errors.New("sync refused by the delete guard")
	// ErrDeletesWithheld is matched by the error of a sync whose planned
	// deletes were not made because an entry failed (in this shard or, for
	// a failure of the walk, another), a read or a copy did not succeed, or
	// the sync was interrupted: what the source lacks is then not known.
	// SyncReport says how many and why. A rerun without failures makes them.
	ErrDeletesWithheld = errors.New("sync deletes withheld")
	// ErrIncompleteSide is matched by the error of a sync that could not
	// read a side in full (a listing page that failed after its retries, a
	// directory that cannot be read): nothing was copied or deleted. It
	// wraps the cause.
	ErrIncompleteSide = errors.New("sync side not read in full")
)

// CheckSync reports whether a sync of src to dst with o can run, making no
// request: one side local and one gs://, a source directory that exists,
// no local side that is a file, a MaxDelete in range, filters that compile
// and an Exclude that is a glob. Its errors match ErrBadOption (ErrBadName
// for a bad bucket name); those about one option or side are an
// *[OptionError] naming it. Sync and PlanSync call it first; a program may
// call it before it connects.
func CheckSync(src, dst Side, o SyncOptions) error {
	if err := checkSides(src, dst); err != nil {
		return err
	}
	if err := o.MaxDelete.check(); err != nil {
		return err
	}
	if err := checkGlobs(o.Include, o.Exclude); err != nil {
		return err
	}
	if !o.CustomTime.IsZero() && (src.remote || !dst.remote) {
		return badOption("SyncOptions.CustomTime", o.CustomTime.Format(time.RFC3339Nano),
			"sets the customTime of the objects an upload sync (a directory to gs://) writes; this sync writes none (a copy between buckets keeps the source's)")
	}
	_, err := compileRegexps(o.ExcludeRegexp)
	return err
}

// checkGlobs refuses an Exclude that is plainly a regular expression:
// gcloud storage rsync's --exclude takes one, and read as a glob it matches
// nothing, so what was meant to be left alone would be copied (or deleted).
// Then it compiles both lists.
func checkGlobs(include, exclude []string) error {
	for _, g := range exclude {
		if strings.HasPrefix(g, "^") || strings.HasSuffix(g, "$") || strings.Contains(g, `\.`) || strings.Contains(g, ".*\\") {
			return badOption("SyncOptions.Exclude", g,
				"looks like a regular expression (gcloud storage rsync's --exclude takes one); Exclude takes a glob such as '*.tmp': for a regular expression use ExcludeRegexp")
		}
	}
	if _, err := filter.New(include, exclude); err != nil {
		return fmt.Errorf("upload: %w: %w", ErrBadOption, err)
	}
	return nil
}

// checkApart refuses two prefixes of one bucket where one holds the other:
// the sync would copy over objects it has yet to read, and --delete would
// delete the source's own objects (gs://b/p to gs://b/p/sub).
func checkApart(src, dst Side) error {
	if src.url.Bucket != dst.url.Bucket {
		return nil
	}
	a, b := src.prefix(), dst.prefix()
	if strings.HasPrefix(a, b) || strings.HasPrefix(b, a) {
		return fmt.Errorf("upload: %w: %s and %s overlap (one holds the other): a sync between them would copy over objects it has yet to read; sync into a prefix outside the source", ErrBadOption, src, dst)
	}
	return nil
}

// checkSides checks the pair of sides and the local one.
func checkSides(src, dst Side) error {
	for _, s := range []Side{src, dst} {
		switch {
		case s == Side{}:
			return fmt.Errorf("upload: %w: a sync side is empty: use LocalSide, RemoteSide or ParseSide", ErrBadOption)
		case s.remote:
			if err := validateBucket(s.url.Bucket); err != nil {
				return err
			}
		}
	}
	switch {
	case src.remote && dst.remote:
		return checkApart(src, dst) // a server-side copy of each object (Copy)
	case !src.remote && !dst.remote:
		return fmt.Errorf("upload: %w: one side of a sync must be gs:// (%s and %s are both local)", ErrBadOption, src, dst)
	case src.remote:
		return checkDir("destination", dst.dir)
	}
	return checkDir("source", src.dir)
}

// checkDir refuses a sync's local side that cannot be one: a source that
// does not exist (a typo, a volume not mounted), a side that is a file. A
// download's destination may not exist yet: the sync makes it.
func checkDir(side, dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && side == "source":
		return &OptionError{Option: side, Value: dir, Err: &reason{"does not exist: the source of an upload sync is a directory (a typo, or a volume not mounted?)", err}}
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return &OptionError{Option: side, Value: dir, Err: &reason{"cannot be read: " + err.Error(), err}}
	case !fi.IsDir() && side == "source":
		return badOption(side, dir, "is a file: sync mirrors a directory; to copy one file use 'gcsput cp %s gs://...'", dir)
	case !fi.IsDir():
		return badOption(side, dir, "is a file: the destination of a download sync is a directory")
	}
	return nil
}

// compileRegexps compiles ExcludeRegexp, each anchored at the path's start
// but not at its end, as gsutil's Python re.match applies -x.
func compileRegexps(exprs []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, 0, len(exprs))
	for _, x := range exprs {
		re, err := regexp.Compile(`^(?:` + x + `)`)
		if err != nil {
			return nil, &OptionError{Option: "SyncOptions.ExcludeRegexp", Value: x, Err: &reason{
				strings.TrimPrefix(err.Error(), "error parsing regexp: ") + " (gcsput reads gsutil's Python-style regular expressions in Go's RE2 syntax, which has no lookaround or backreferences)", err}}
		}
		out = append(out, re)
	}
	return out, nil
}

// PlanSync reads both sides as [Client.Sync] does and returns what it
// would copy and delete, with the delete guard's verdict in Refused and
// Withheld, changing nothing: a dry run. Entries skipped or failed while
// reading are given to Options.OnResult as Sync gives them; unchanged ones
// are only counted. The bucket is asked first, as Sync asks it (for
// listing only). The error is nil when the sides could be read, refused by
// the guard or not; else it matches ErrBadOption, ErrBadName,
// ErrIncompleteSide or ErrRefused.
//
// The plan returned holds every planned copy and delete in memory (about
// 200 bytes each, with the paths): a dry run is for looking at, and the
// gcsput command prints it whole. Sync itself holds no more than
// DefaultSpillAt of each list and writes the rest to a temporary file.
func (c *Client) PlanSync(ctx context.Context, src, dst Side, o SyncOptions) (*SyncPlan, error) {
	ctx, leave, err := c.enter(ctx) // Close cancels and waits for it
	if err != nil {
		return nil, err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "SyncOptions"); err != nil {
		return nil, err
	}
	s, err := c.newSyncRun(ctx, src, dst, o, false)
	if err != nil {
		return nil, err
	}
	if ctx, err = c.preflight(ctx, nil, syncBucket(src, dst), syncPerms(src, dst, o, false)...); err != nil {
		return nil, err
	}
	defer c.flushSums()
	p, err := s.plan(ctx)
	if err != nil {
		return nil, err
	}
	err = p.fill(true)
	p.close()
	if err != nil {
		return nil, err
	}
	p.copies, p.deletes, p.run = nil, nil, nil // AllCopies and AllDeletes yield the slices
	return p, nil
}

// Sync makes dst hold what src holds: it copies what dst lacks or holds
// differently (by size and CRC32C, or modification time with
// CompareMTime) and, with Delete, removes what src lacks. Either side may
// be the local one: an upload sync or a download sync.
//
// Nothing changes until both sides are read in full (else ErrIncompleteSide)
// and the delete guard allows the deletes (else a *DeleteGuardError,
// matching ErrDeleteGuard). Copies are the Client's transfers: resumable,
// verified, Parallelism at once, saved in the state directory, with
// POSIX mtime and mode kept (an upload sync puts its plan's files and
// bytes in BatchProgress's totals before the first transfer, as CopyAll
// does); an object stored gzip-encoded is downloaded
// decompressed and compared by its content (see DownloadOptions.Decompress).
// An object under a customer-supplied key is compared by the CRC32C read
// with its key (one request, when the sizes match); one under another key
// than Options.EncryptionKey or KMSKeyName is a change, re-written under
// it; and without either, an object under a customer-supplied key is never
// replaced by an unencrypted one: that entry fails with ErrEncryptedDest.
// The deletes run only when every entry succeeded (else the error matches
// ErrDeletesWithheld, and the report says why). Entries the walk skips (a
// symlink to a directory, a named pipe) keep what dst holds at and under
// their path; gcsput's own files (".NAME.gcsput-partial", components under
// ComponentPrefix) are neither copied nor deleted, and objects named like
// them are not downloaded. With Options.Shard, the sync copies and deletes
// only this shard's paths.
//
// Before it reads the sides, Sync asks the bucket once whether it exists
// and whether these credentials may list (and, for an upload, write and
// with Delete delete) there, as CopyAll does: a refusal is an error
// matching ErrRefused, and nothing was read or sent. An upload whose bucket
// could not be asked stops at its first 403 or 404: the error then matches
// ErrBatchStopped and says why (the failures in flight after it match it
// too), and nothing more is started.
//
// The report is nil only when the sides could not be read (or the options
// are bad, or the bucket refused). The error is nil when every entry
// succeeded; else it matches ErrSomeFailed (an entry failed or was
// interrupted; the Results say which) and/or ErrDeletesWithheld, or
// ErrDeleteGuard, or ErrBatchStopped.
//
// # Memory
//
// Both sides are read as streams in the order GCS lists names (the bytes
// of the path below the side; a local tree is walked in that order, so
// "a-b" and "a.b" come before "a/x") and merged, so what a sync holds is
// bounded by the widest local directory, a listing page and the transfers
// in flight, not by the number of entries. The planned copies and deletes
// are written down as they are found and acted on once the sides are read
// and the guard has spoken; beyond DefaultSpillAt entries each list goes
// to a temporary file (0600) in Options.StateDir, or os.TempDir without
// one, removed when the sync ends.
func (c *Client) Sync(ctx context.Context, src, dst Side, o SyncOptions) (*SyncReport, error) {
	ctx, leave, err := c.enter(ctx) // Close cancels and waits for it
	if err != nil {
		return nil, err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "SyncOptions"); err != nil {
		return nil, err
	}
	s, err := c.newSyncRun(ctx, src, dst, o, true)
	if err != nil {
		return nil, err
	}
	// A mistyped bucket or a key that may not write is said once, here; when
	// that cannot be asked, the hook stops an upload at its first 403 or 404.
	s.hook = &callHook{}
	ctx = withHook(ctx, s.hook)
	if ctx, err = c.preflight(ctx, s.hook, syncBucket(src, dst), syncPerms(src, dst, o, true)...); err != nil {
		return nil, err
	}
	defer c.flushSums()
	plan, err := s.plan(ctx)
	if err != nil {
		return nil, err
	}
	defer plan.close()
	if plan.Refused != nil {
		return &s.rep, plan.Refused
	}
	if o.OnPlan != nil {
		if err := plan.fill(false); err != nil {
			return nil, err
		}
		o.OnPlan(plan)
	}
	if !src.remote && dst.remote {
		// BatchProgress's totals cover the whole upload from its first byte, as
		// CopyAll's walk does: counts, not a name per file.
		c.Expect(plan.copies.len(), plan.Bytes)
	}
	copied := s.copy(ctx, plan)
	why := s.guard(plan).withheld(copied, s.rep.Failed, s.rep.Interrupted)
	if why == "" && plan.deletes.len() > 0 && ctx.Err() != nil {
		why = "the sync was interrupted"
	}
	if why != "" {
		s.rep.DeletesWithheld, s.rep.WithheldBecause = plan.deletes.len(), why
	} else {
		s.remove(ctx, plan)
	}
	if err := s.hook.stop.err(); err != nil {
		return &s.rep, err
	}
	return &s.rep, s.err()
}

// syncBucket is the bucket a sync asks about before it starts: the
// destination's when both sides are buckets.
func syncBucket(src, dst Side) string {
	if dst.IsRemote() {
		return dst.url.Bucket
	}
	return src.url.Bucket
}

// syncPerms are the permissions a sync needs on that bucket: listing
// always; writing (and deleting, with Delete) for an upload that runs (not
// a dry run). A download asks no more than listing: reading may be granted
// object by object (fine-grained ACLs), which the bucket's permissions do
// not show.
func syncPerms(src, dst Side, o SyncOptions, run bool) []string {
	p := []string{permList}
	switch {
	case !dst.IsRemote() || !run:
	case o.Delete:
		p = append(p, permCreate, permDelete)
	default:
		p = append(p, permCreate)
	}
	return p
}
