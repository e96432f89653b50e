package upload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// A parallel composite upload (Options.ParallelUpload) sends a large file as
// up to 32 components, each a temporary object uploaded through the
// resumable chunk loop on a stream of the Parallelism budget, then composes
// them into the destination and deletes them. Its record lists the
// components: a killed process resumes the ones in flight from the server's
// offset and never sends a finished one again.

// ComponentPrefix is the reserved prefix of the temporary objects of
// composite uploads: gcsput-tmp/HASH/INDEX, in the destination's bucket,
// where HASH is of the source's fingerprint, the destination and the
// component size, so the same file to the same place names the same
// components in every run, and a changed file other ones.
const ComponentPrefix = "gcsput-tmp/"

// componentDir is the directory (ending in "/") of the components of fp
// uploaded to dst in components of per bytes.
func componentDir(fp state.Fingerprint, dst URL, per int64) string {
	h := sha256.New()
	fmt.Fprintf(h, "gcsput composite 1\x00%s\x00%d %d %d %d %d\x00%s\x00%d",
		fp.Path, fp.Size, fp.ModTime, fp.CTime, fp.Inode, fp.Device, dst, per)
	return ComponentPrefix + hex.EncodeToString(h.Sum(nil)[:16]) + "/"
}

// isComponentName reports whether an object name is one a composite
// upload gives its temporary components: gcsput-tmp/<32 hex digits>/<0..31>.
// Tools that mirror a bucket leave such objects alone: they belong to an
// upload in progress (or to 'gcsput sessions gc').
func isComponentName(name string) bool {
	rest, ok := strings.CutPrefix(name, ComponentPrefix)
	if !ok || len(rest) < 34 || rest[32] != '/' {
		return false
	}
	if _, err := hex.DecodeString(rest[:32]); err != nil || strings.ToLower(rest[:32]) != rest[:32] {
		return false
	}
	i, err := strconv.Atoi(rest[33:])
	return err == nil && i >= 0 && i < state.MaxComponents && strconv.Itoa(i) == rest[33:]
}

// componentPlan splits a file of fp.Size bytes into components of at least
// least bytes (the last may be smaller), at most 32 of them; nil when that
// makes fewer than 2.
func componentPlan(fp state.Fingerprint, dst URL, least int64) []state.Component {
	size := fp.Size
	per, n := componentSize(size, least)
	if n < 2 {
		return nil
	}
	dir := componentDir(fp, dst, per)
	comps := make([]state.Component, n)
	for i := range comps {
		start := int64(i) * per
		comps[i] = state.Component{Name: dir + strconv.Itoa(i), Start: start, End: min(start+per, size)}
	}
	return comps
}

// checkPlan reports whether rec's components can be continued as the
// composite upload of rec.Fingerprint to dst: the plan componentPlan makes
// for its component size, names and all, with consistent sessions. The
// record is untrusted: nothing it names outside that plan is touched.
func checkPlan(rec *state.Record, dst URL) error {
	comps := rec.Upload.Components
	if err := state.CheckComponents(comps, rec.Fingerprint.Size, dst.Bucket); err != nil {
		return err
	}
	want := componentPlan(rec.Fingerprint, dst, comps[0].End-comps[0].Start)
	if len(want) != len(comps) {
		return fmt.Errorf("%d components where the plan has %d", len(comps), len(want))
	}
	for i, w := range want {
		if c := comps[i]; c.Name != w.Name || c.Start != w.Start || c.End != w.End {
			return fmt.Errorf("component %d is not the plan's %s (%d-%d)", i, w.Name, w.Start, w.End)
		}
	}
	return nil
}

// composite is one composite upload in progress. Its components run
// concurrently: mu guards the record and the Result's counters.
type composite struct {
	c       *Client
	r       *Result
	f       *os.File
	fp      state.Fingerprint
	dst     URL
	spec    resumable.ObjectSpec // the destination's metadata and preconditions
	o       UploadOptions
	resumed bool // a saved composite upload is being continued
	// verdict, when not nil, is the bucket's answer being read while the
	// sessions start (composesAhead): until it is in (pending), nothing is
	// saved and no component sends a byte.
	verdict *verdict

	// saveMu is held while the record is written, without mu (see save);
	// written is the last change a finished write holds. Taken before mu.
	saveMu  sync.Mutex
	written int

	mu       sync.Mutex
	changes  int // changes to rec that called for a save
	rec      *state.Record
	gone     bool                 // the record was removed: nothing more is saved
	pending  bool                 // verdict is not in: nothing is saved yet
	live     []*resumable.Session // each component's session in flight (see track)
	at       []int64              // how far each component has got, for Progress
	resuming []bool               // the component continues a saved session: its first EventResumed counts
}

// errUploadWhole: the bucket's verdict, read while the sessions started,
// is against composing; the sessions were cancelled and the file goes up
// whole.
var errUploadWhole = errors.New("upload: not composed")

// compositeFile uploads f as a composite upload: the saved one in rec if
// any, else a new one, recorded before any component sends a byte. With
// v (composesAhead) the bucket's verdict is still being read: the
// sessions start meanwhile, and if it is against composing they are
// cancelled and errUploadWhole returned.
func (c *Client) compositeFile(ctx context.Context, r *Result, f *os.File, fp state.Fingerprint, dst URL, a Attrs, o UploadOptions, rec *state.Record, v *verdict) error {
	u := &composite{c: c, r: r, f: f, fp: fp, dst: dst, spec: c.spec(ctx, dst, fp.Size, a, o), o: o, resumed: rec != nil, verdict: v, pending: v != nil}
	if rec == nil {
		rec = &state.Record{Kind: state.KindUpload, Source: fp.Path, Dest: dst.String(), Fingerprint: fp, Size: fp.Size,
			Shard: c.opts.Shard, Upload: &state.Upload{Options: encodeOptions(o), Components: componentPlan(fp, dst, c.componentLeast(fp.Size)),
				Dest: encryptionOf(u.spec).encode()}}
	}
	u.start(rec)
	err := u.uploadComponents(ctx)
	if v != nil {
		<-v.done // its goroutine ends with ctx
		if v.err == nil && v.why != "" {
			u.drop(ctx)
			c.composeVerdict(dst, v)
			return errUploadWhole
		}
		if err == nil {
			err = u.clear(ctx) // every component existed: none waited for it
		}
	}
	if err != nil {
		if ch := sourceChanged(f.Name(), fp, err); ch != "" {
			u.drop(ctx)
			return changedError("upload: %s changed while being uploaded (%s); nothing was written to %s: upload it again", f.Name(), ch, dst)
		}
		return fmt.Errorf("upload: %s: %w", dst, err) // the record stays: a rerun continues
	}
	return u.compose(ctx)
}

// start takes rec as the upload's record: what is already uploaded counts
// as resumed from, and the record is saved.
func (u *composite) start(rec *state.Record) {
	comps := rec.Upload.Components
	u.rec, u.at, u.resuming = rec, make([]int64, len(comps)), make([]bool, len(comps))
	u.live = make([]*resumable.Session, len(comps))
	for i, comp := range comps {
		switch {
		case comp.Done():
			u.at[i] = comp.End - comp.Start
			u.r.ResumedFrom += u.at[i]
		case comp.Session != nil:
			u.resuming[i] = true
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.save()
}

// clear waits for the bucket's verdict before a component's first byte:
// errUploadWhole when it is against composing; else the upload is on,
// given the notice once, and its record, with every session started so
// far, saved.
func (u *composite) clear(ctx context.Context) error {
	select {
	case <-u.verdict.ready():
	case <-ctx.Done():
		return ctx.Err()
	}
	v := u.verdict
	if v == nil {
		return nil
	}
	if v.err != nil {
		return v.err
	}
	if v.why != "" {
		return errUploadWhole
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.pending {
		u.pending = false
		u.mu.Unlock()
		u.c.composeVerdict(u.dst, v)
		u.mu.Lock()
	}
	u.save()
	return nil
}

// uploadComponents uploads the components not yet uploaded: the first on
// the stream the upload holds, the others on streams taken while free.
func (u *composite) uploadComponents(ctx context.Context) error {
	var todo []int
	for i, comp := range u.rec.Upload.Components {
		if !comp.Done() {
			todo = append(todo, i)
		}
	}
	next := 0
	return u.c.startParts(ctx, len(todo), func() (int, bool) {
		if next == len(todo) || u.refused() {
			return 0, false
		}
		next++
		return todo[next-1], true
	}, func(ctx context.Context, i int) error {
		if err := u.component(ctx, i); !errors.Is(err, errUploadWhole) {
			return err
		}
		// Not an error that cancels the others: their sessions in flight
		// start, to be cancelled (compositeFile).
		return nil
	}).join()
}

// refused reports whether the bucket's verdict is in, and against
// composing.
func (u *composite) refused() bool {
	select {
	case <-u.verdict.ready():
		return u.verdict != nil && u.verdict.err == nil && u.verdict.why != ""
	default:
		return false
	}
}

// compose makes the destination from the uploaded components, with the
// upload's metadata and preconditions, and checks its CRC32C against the
// combination of theirs.
func (u *composite) compose(ctx context.Context) error {
	comps := u.rec.Upload.Components
	srcs := make([]resumable.ComposeSource, len(comps))
	for i, comp := range comps {
		srcs[i] = resumable.ComposeSource{Name: comp.Name, Generation: comp.Generation, CRC32C: comp.CRC32C, Size: comp.End - comp.Start}
	}
	want := resumable.ComposedCRC32C(srcs)
	attempts := 1
	emit := u.c.emitter(u.dst)
	rc, err := u.c.resumable(func(e resumable.Event) {
		if e.Kind == resumable.EventRetry {
			attempts++
			u.r.Attempts++
		}
		emit(e)
	})
	if err != nil {
		return err
	}
	// GCS deletes the components itself, hard: a bucket with soft delete
	// does not keep (and bill) them for its retention (deleteSourceObjects).
	obj, err := rc.ComposeWith(ctx, u.spec, srcs, resumable.ComposeOptions{DeleteSources: true})
	if err != nil {
		return u.composeFailed(ctx, err, attempts, want)
	}
	crc, _ := resumable.DecodeCRC32C(obj.Crc32c) // Compose checked it
	return u.finished(ctx, obj.Generation, int64(obj.Size), crc)
}

// composeFailed decides what a failed compose means. A 412 under NoClobber
// or IfGenerationMatch after a retried attempt may be that attempt's own
// object, whose reply was lost: it is ours if its CRC32C and component
// count are. Otherwise the precondition failed (NoClobber: "skipped:
// exists"), or, the destination's holding, a component changed since it
// was uploaded. A CRC32C that is not the combination is a corrupt object.
// Any other failure keeps the record: a rerun composes again.
func (u *composite) composeFailed(ctx context.Context, err error, attempts int, want uint32) error {
	switch {
	case errors.Is(err, resumable.ErrChecksumMismatch):
		return u.corrupt(ctx, err)
	case !errors.Is(err, resumable.ErrPreconditionFailed) && !isStatus(err, 404):
		return fmt.Errorf("upload: %s: %w", u.dst, err)
	}
	attrs, serr := u.c.Stat(ctx, u.dst)
	switch {
	case serr == nil && attempts > 1 && u.own(attrs, want):
		return u.finished(ctx, attrs.Generation, attrs.Size, attrs.CRC32C)
	case u.o.NoClobber && serr == nil:
		u.drop(ctx)
		u.r.Status, u.r.Note = StatusSkipped, "exists"
		u.r.Generation, u.r.CRC32C, u.r.Size = attrs.Generation, attrs.CRC32C, attrs.Size
		return nil
	case u.o.IfGenerationMatch != nil && (serr != nil || attrs.Generation != *u.o.IfGenerationMatch):
		u.drop(ctx)
		return notReplaced(u.dst, u.o, err)
	}
	u.drop(ctx)
	return fmt.Errorf("upload: %s: a component was replaced or deleted before the compose; nothing was written: upload it again: %w", u.dst, err)
}

// own reports whether attrs are of the object this upload composes.
func (u *composite) own(attrs *storage.ObjectAttrs, crc uint32) bool {
	return attrs.Size == u.fp.Size && attrs.CRC32C == crc && attrs.ComponentCount == int64(len(u.rec.Upload.Components))
}

// corrupt handles a composite whose CRC32C is not the combination of its
// components': that generation is deleted from the destination (nothing
// half-done stays there), and so are the components and the record.
func (u *composite) corrupt(ctx context.Context, cause error) error {
	var ce *resumable.ChecksumError
	what := "it could not be found to be deleted"
	if attrs, err := u.c.Stat(ctx, u.dst); err == nil && errors.As(cause, &ce) && attrs.CRC32C == ce.Remote.CRC32C &&
		attrs.ComponentCount == int64(len(u.rec.Upload.Components)) {
		what = "it was deleted"
		if err := u.c.Delete(ctx, u.dst, DeleteOptions{IfGenerationMatch: &attrs.Generation}); err != nil {
			what = fmt.Sprintf("deleting it failed (%v): delete generation %d", err, attrs.Generation)
		}
	}
	u.drop(ctx)
	return fmt.Errorf("upload: %s: the composite object is corrupt, %s; upload it again: %w", u.dst, what, cause)
}

// finished records the composed object in the Result and removes the
// record. The compose deleted the components (deleteSourceObjects); where
// the server left them they are deleted here, one by one, as before.
func (u *composite) finished(ctx context.Context, gen, size int64, crc uint32) error {
	r := u.r
	r.Status, r.Generation, r.Size, r.CRC32C = r.statusAfter(u.resumed), gen, size, crc
	if r.Note != "" {
		r.Note += "; "
	}
	r.Note += fmt.Sprintf("composite of %d components", len(u.rec.Upload.Components))
	comps := u.rec.Upload.Components
	u.forget()
	if !u.c.sourcesLeft(ctx, u.dst.Bucket, comps) {
		u.c.progress(r, size, size)
		return changedDuring(u.f.Name(), u.fp)
	}
	if err := u.c.deleteComponents(ctx, u.dst.Bucket, comps); err != nil {
		u.c.warn(fmt.Sprintf("%s: uploaded, but its temporary components could not all be deleted (%v): remove them with 'gcsput rm -r gs://%s/%s'",
			u.dst, err, u.dst.Bucket, componentDirOf(comps[0].Name)))
	}
	u.c.progress(r, size, size)
	return changedDuring(u.f.Name(), u.fp)
}

// drop abandons the upload: its sessions are cancelled, its components
// deleted and its record removed. If that fails the record stays, with a
// warning: the next run, 'gcsput sessions cancel' or 'gcsput sessions gc'
// deletes the components it names.
func (u *composite) drop(ctx context.Context) {
	u.mu.Lock()
	gone := u.gone
	u.mu.Unlock()
	if gone {
		return
	}
	if _, err := u.c.dropComposite(ctx, u.rec); err != nil {
		u.c.warn(fmt.Sprintf("%s: the components of the abandoned composite upload were not all deleted (%v): its record is kept for 'gcsput sessions cancel'", u.dst, err))
		return
	}
	u.forget()
}

// forget removes the record once it is of no further use, after any write
// of it in progress (which would otherwise put it back).
func (u *composite) forget() {
	u.saveMu.Lock()
	defer u.saveMu.Unlock()
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.gone && u.c.store != nil {
		u.c.store.Remove(u.rec.Key())
	}
	u.gone, u.r.Saved = true, false
}
