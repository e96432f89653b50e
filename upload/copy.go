package upload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// StatusCopied: the object was copied on the server (Copy) from the start
// in this run.
const StatusCopied Status = "copied"

// CopyOptions configure Copy, CopyObjects and CopyPrefix. The zero value
// copies the source's live generation, with its metadata, over whatever
// the destination holds.
type CopyOptions struct {
	// SourceGeneration is the source generation to copy. 0 reads the live
	// generation when the copy starts and pins it: a source overwritten
	// during the copy fails it rather than mixing in the new one. A batch
	// copy pins the generation its listing saw.
	SourceGeneration int64 `json:"source_generation,omitempty"`
	// NoClobber never overwrites: an existing destination is skipped
	// (StatusSkipped, Note "exists"), and the copy itself is conditional
	// on there being none (ifGenerationMatch=0).
	NoClobber bool `json:"no_clobber,omitempty"`
	// IfGenerationMatch, when not nil, replaces only that generation of the
	// destination (0: only if there is none); another fails the copy with
	// an error matching resumable.ErrPreconditionFailed.
	IfGenerationMatch *int64 `json:"if_generation_match,omitempty"`
	// Attrs, when not nil, are the destination's metadata instead of the
	// source's: every field, so a field left empty is not copied. Its
	// StorageClass and KMSKeyName apply to the destination.
	Attrs *Attrs `json:"attrs,omitempty"`
	// StorageClass, when set, is the destination's storage class (e.g.
	// "NEARLINE"); its other metadata stays the source's (or Attrs'). GCS
	// copies across classes in several calls.
	StorageClass string `json:"storage_class,omitempty"`
	// Holds are the destination's holds and retention when Attrs is nil
	// (Attrs carries its own otherwise); GCS never copies the source's.
	Holds Holds `json:"holds,omitzero"`
	// SkipUnchanged skips a copy whose destination already has the source's
	// size and CRC32C (StatusSkipped, Note "unchanged").
	SkipUnchanged bool `json:"skip_unchanged,omitempty"`
	// MaxBytesPerCall is GCS's maxBytesRewrittenPerCall: each rewrite call
	// copies at most this many bytes (a multiple of 1 MiB). 0 lets the
	// server decide. It is meant for tests; GCS honours it only for copies
	// across locations or storage classes.
	MaxBytesPerCall int64 `json:"max_bytes_per_call,omitempty"`
}

// CopyItem is one object to copy and where.
type CopyItem struct {
	Src, Dst URL
}

// Copy copies the object src to dst on the server, with the JSON API's
// rewrite: no byte passes through this machine. A copy within a location
// and storage class takes one request; others (another location, class or
// key) take several, each answering a token to continue with. After each
// such call the token is saved in the state directory, so a copy cut short
// (killed, interrupted) continues from the last call when run again or by
// Client.Resume (Status "resumed", ResumedFrom the bytes already copied)
// while the source is still the generation it copied. The destination's
// CRC32C is checked against the source's. Result.Transferred is the bytes
// the server reports rewritten in this run, counted from ResumedFrom (GCS
// keeps a rewrite's progress itself, so a call whose answer was lost may
// have done some of them before). The Result is never nil; its Err is the
// returned error.
func (c *Client) Copy(ctx context.Context, src, dst URL, o CopyOptions) (*Result, error) {
	return c.copy(ctx, src, dst, o, copyHow{})
}

// copyHow says how a copy runs. restore resumes a saved copy as it was
// started (Client.Resume): its destination is the saved one, whole,
// whatever the client's keys. move makes it a move's first step, which
// its record says, so that a resume finishes the move.
type copyHow struct{ restore, move bool }

// copy is Copy, run as how says.
func (c *Client) copy(ctx context.Context, src, dst URL, o CopyOptions, how copyHow) (*Result, error) {
	ctx, leave, err := c.enter(ctx) // Close cancels and waits for it
	if err != nil {
		return failedResult(src.String(), dst.String(), err), err
	}
	defer leave()
	start := time.Now()
	r := copyResult(src, dst)
	err = c.hold(ctx, func() error { return c.copyObject(ctx, r, src, nil, dst, o, how) })
	r.Elapsed = time.Since(start)
	c.finish(ctx, r, err)
	return r, r.Err
}

// copyObject runs one copy. listed, when not nil, is the source as a
// listing found it (a batch copy), which saves a request.
func (c *Client) copyObject(ctx context.Context, r *Result, src URL, listed *storage.ObjectAttrs, dst URL, o CopyOptions, how copyHow) error {
	if err := checkDest(src); err != nil {
		return fmt.Errorf("copy: source: %w", err)
	}
	if c.manifested(r) {
		return nil
	}
	if err := checkDest(dst); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	if src == dst {
		return fmt.Errorf("copy: %s: the source and the destination are the same object", src)
	}
	key := state.Key(state.KindRewrite, src.String(), dst.String(), c.opts.Shard)
	ctx, cl := c.claimFor(ctx, key)
	defer cl.release()
	saved := c.savedRewrite(key)
	if saved != nil {
		// A saved copy is continued by one process at a time.
		if err := cl.take(); errors.Is(err, ErrInUse) {
			return fmt.Errorf("copy: %w", busy(src.String(), dst.String(), err))
		}
	}
	a, err := c.copySource(ctx, src, listed, o)
	if err != nil {
		return err
	}
	r.Size, r.CRC32C = a.Size, a.CRC32C
	if o.NoClobber || o.SkipUnchanged {
		if skip, err := c.copyPrecheck(ctx, r, a, dst, o); skip || err != nil {
			return err
		}
	}
	d, saved, err := c.destFor(r, saved, a, o, how.restore)
	var dstKey resumable.EncryptionKey
	if err == nil {
		dstKey, err = c.destKey(d) // before a saved copy is dropped: refused, it is kept
	}
	if err != nil {
		return fmt.Errorf("copy: %s -> %s: %w", src, dst, err)
	}
	t := c.newTracker(r, dst)
	t.claim = cl
	t.rec = c.rewriteRecord(r, a, o, d, how.move)
	if how.restore && saved != nil && saved.Rewrite.Token == "" {
		return fmt.Errorf("copy: %s -> %s: %w", src, dst, restoreRefused("the saved copy has no rewrite token to continue from"))
	}
	if saved != nil {
		c.adoptSaved(r, t, saved, a)
	}
	return cl.stopped(c.rewrite(ctx, r, t, src, a, dst, o, d, dstKey, how.restore))
}

// restoreRefused is the error of a resume (Client.Resume) that would have
// to copy from the start under the destination its record names although
// the record cannot be relied on: GCS binds a rewrite token to the
// destination it was made for (its key above all), so a saved token it
// refuses, or a record without one, may be a record edited by hand (its
// key dropped), and starting over from it could write the destination
// unencrypted. The record is kept; the command run again with its own
// options and keys continues or starts over under those.
func restoreRefused(why string) error {
	return fmt.Errorf("%s, so its saved destination (its encryption key above all) cannot be trusted to copy from the start: nothing was written; "+
		"run the copy (or move) again with its options and keys, or cancel the saved copy", why)
}

// rewriteRecord is the record of a copy from its start: the source
// generation, the call's options and the destination, whole; move says
// the copy is a move's.
func (c *Client) rewriteRecord(r *Result, a *storage.ObjectAttrs, o CopyOptions, d copyDest, move bool) *state.Record {
	return &state.Record{Kind: state.KindRewrite, Source: r.Source, Dest: r.Dest, Shard: c.opts.Shard, Size: a.Size,
		Rewrite: &state.Rewrite{Endpoint: c.endpoint, SourceGeneration: a.Generation, SourceCRC32C: a.CRC32C,
			Options: encodeOptions(o), Dest: d.encode(), Move: move}}
}

// destFor is the destination this copy writes, and the saved copy still to
// consider (nil once dropped). Resuming one (restore), it is the saved
// destination, restored whole; a record without one is refused, as its
// key cannot be known. Otherwise it is the one o and the client ask for,
// checked against a saved copy that would be continued (same source
// generation, young enough, with a token): another encryption is refused
// (encryptionChange); other preconditions, class or metadata drop the
// saved copy, and the copy starts over and says why.
func (c *Client) destFor(r *Result, saved *state.Record, a *storage.ObjectAttrs, o CopyOptions, restore bool) (copyDest, *state.Record, error) {
	sd, ok := savedDest(saved)
	switch {
	case restore && saved != nil && !ok:
		return sd, nil, errors.New("the saved copy does not record its destination's encryption (it was saved by an older gcsput): " +
			"run the copy again with its options and keys, or cancel it")
	case restore && saved != nil:
		return sd, saved, nil
	}
	want := c.copyDestOf(o)
	if saved == nil || saved.Rewrite.SourceGeneration != a.Generation || c.store.Expired(saved) || saved.Rewrite.Token == "" {
		return want, saved, nil // adoptSaved drops it, and says why
	}
	var why string
	if !ok {
		why = "saved copy was saved by an older gcsput, without its destination: copied from the start"
	} else if err := encryptionChange("copy", sd, want); err != nil {
		return want, nil, err
	} else if ch := otherChange(sd, want); ch != "" {
		why = fmt.Sprintf("saved copy was to write the destination with other options (%s): copied from the start", ch)
	} else {
		return want, saved, nil
	}
	r.Note = why
	c.store.Remove(saved.Key())
	return want, nil, nil
}

// savedRewrite loads the saved copy under key, or nil (none, unreadable, or
// from another endpoint).
func (c *Client) savedRewrite(key string) *state.Record {
	if c.store == nil {
		return nil
	}
	rec, err := c.store.Load(key)
	if err != nil || rec.Kind != state.KindRewrite || rec.Rewrite == nil || !c.store.Trusted(rec, c.endpoint) {
		return nil
	}
	return rec
}

// adoptSaved continues a saved copy if it copies the same source
// generation and is young enough; otherwise the copy starts over and says
// why.
func (c *Client) adoptSaved(r *Result, t *tracker, saved *state.Record, a *storage.ObjectAttrs) {
	switch {
	case saved.Rewrite.SourceGeneration != a.Generation:
		r.Note = fmt.Sprintf("source changed (generation %d, now %d): copied from the start", saved.Rewrite.SourceGeneration, a.Generation)
	case c.store.Expired(saved):
		r.Note = "saved copy expired: copied from the start"
	case saved.Rewrite.Token == "":
	default:
		t.rec.Created, t.rec.Offset, t.rec.Rewrite.Token = saved.Created, saved.Offset, saved.Rewrite.Token
		t.resuming = true
		return
	}
	c.store.Remove(saved.Key())
}

// copySource is the source generation to copy: the one listed, the one
// asked for, or the live one.
func (c *Client) copySource(ctx context.Context, src URL, listed *storage.ObjectAttrs, o CopyOptions) (*storage.ObjectAttrs, error) {
	var a *storage.ObjectAttrs
	var err error
	switch {
	case listed != nil && (o.SourceGeneration == 0 || o.SourceGeneration == listed.Generation):
		// A listing shows no CRC32C of an object under a customer-supplied
		// key: read that generation with the key, as Stat does, since the
		// copy is checked against it.
		if a, err = c.keyedAttrs(ctx, listed); err != nil {
			return nil, fmt.Errorf("copy: %s: %w", src, err)
		}
		return a, nil
	case o.SourceGeneration != 0:
		a, err = c.statGeneration(ctx, src, o.SourceGeneration)
	default:
		a, err = c.Stat(ctx, src)
	}
	if errors.Is(err, storage.ErrObjectNotExist) {
		return nil, objectNotFound("copy: %s: no such object%s", src, generationText(o.SourceGeneration))
	}
	if err != nil {
		return nil, fmt.Errorf("copy: %s: %w", src, err)
	}
	return a, nil
}

func generationText(gen int64) string {
	if gen == 0 {
		return ""
	}
	return fmt.Sprintf(" (generation %d)", gen)
}

// copyPrecheck skips a NoClobber copy whose destination exists, and a
// SkipUnchanged one whose destination has the source's size and CRC32C.
func (c *Client) copyPrecheck(ctx context.Context, r *Result, src *storage.ObjectAttrs, dst URL, o CopyOptions) (bool, error) {
	attrs, err := c.Stat(ctx, dst)
	switch {
	case errors.Is(err, storage.ErrObjectNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("copy: %s: %w", dst, err)
	}
	note := "exists"
	if !o.NoClobber {
		if attrs.Size != src.Size || attrs.CRC32C != src.CRC32C {
			return false, nil
		}
		note = "unchanged"
	}
	r.Status, r.Note, r.Generation, r.CRC32C, r.Size = StatusSkipped, note, attrs.Generation, attrs.CRC32C, attrs.Size
	return true, nil
}

// rewrite runs the rewrite loop, saving the token after every call that
// leaves the copy unfinished, and once more from zero if a saved token is
// refused (unless restore: see restoreRefused).
// d is the destination, dstKey its customer-supplied key (nil for none).
func (c *Client) rewrite(ctx context.Context, r *Result, t *tracker, src URL, a *storage.ObjectAttrs, dst URL, o CopyOptions,
	d copyDest, dstKey resumable.EncryptionKey, restore bool) error {
	rc, err := c.resumable(t.onEvent)
	if err != nil {
		return err
	}
	srcKey, err := c.readKey(a) // a CSEK source is read with its key, found by its SHA256
	if err != nil {
		return err
	}
	for {
		sp := rewriteSpec(src, a, dst, d, o.MaxBytesPerCall)
		sp.SrcKey, sp.Dst.Key = srcKey, dstKey
		sp.Token, sp.Rewritten = t.rec.Rewrite.Token, t.rec.Offset
		obj, err := rc.Rewrite(ctx, sp, func(p resumable.RewriteProgress) {
			t.rec.Rewrite.Token, t.rec.Offset = p.Token, p.Rewritten
			t.save()
		})
		if errors.Is(err, resumable.ErrRewriteTokenRejected) && sp.Token != "" && restore {
			return fmt.Errorf("copy: %s -> %s: %w: %w", src, dst, restoreRefused("the server refused the saved rewrite token"), err)
		}
		if errors.Is(err, resumable.ErrRewriteTokenRejected) && sp.Token != "" {
			move := t.rec.Rewrite.Move // forget drops t.rec
			t.forget()
			t.rec = c.rewriteRecord(r, a, o, d, move)
			t.resuming, r.ResumedFrom, r.Note = false, 0, "saved rewrite token refused by the server: copied from the start"
			continue
		}
		if err != nil {
			return c.copyError(ctx, r, t, src, a, dst, o, err)
		}
		t.forget()
		status := StatusCopied
		if r.ResumedFrom > 0 {
			status = StatusResumed
		} else if r.Note != "" {
			status = StatusRestarted
		}
		done(r, obj, status)
		return nil
	}
}

// rewriteSpec is the rewrite of a's generation of src to dst, written as
// want says (its key aside: the caller adds it).
func rewriteSpec(src URL, a *storage.ObjectAttrs, dst URL, want copyDest, perCall int64) resumable.RewriteSpec {
	d := resumable.ObjectSpec{Bucket: dst.Bucket, Name: dst.Object, DoesNotExist: want.NoClobber, KMSKeyName: want.KMSKeyName}
	if want.IfGenerationMatch != nil {
		d.GenerationMatch, d.DoesNotExist = *want.IfGenerationMatch, *want.IfGenerationMatch == 0
	}
	at := want.Attrs
	holds := want.Holds
	if at != nil {
		holds = at.Holds
	}
	if at == nil && (want.StorageClass != "" || !holds.none()) {
		// GCS takes the destination's resource whole when one is sent: the
		// source's metadata goes with the new class.
		at = &Attrs{ContentType: a.ContentType, CacheControl: a.CacheControl, ContentDisposition: a.ContentDisposition,
			ContentEncoding: a.ContentEncoding, ContentLanguage: a.ContentLanguage, Metadata: a.Metadata}
	}
	if at != nil {
		d.ContentType, d.CacheControl, d.ContentDisposition = at.ContentType, at.CacheControl, at.ContentDisposition
		d.ContentEncoding, d.ContentLanguage, d.Metadata = at.ContentEncoding, at.ContentLanguage, nonEmpty(at.Metadata)
		d.StorageClass = at.StorageClass
		if want.StorageClass != "" {
			d.StorageClass = want.StorageClass
		}
		if d.ContentType == "" {
			d.ContentType = "application/octet-stream" // else nothing may be set, and the source's would stay
		}
	}
	holds.apply(&d) // a copy never carries its source's holds: only these
	return resumable.RewriteSpec{SrcBucket: src.Bucket, SrcObject: src.Object, SrcGeneration: a.Generation, SrcCRC32C: a.CRC32C,
		SrcSize: a.Size, Dst: d, MaxBytesPerCall: perCall}
}

// copyError explains a failed copy. A 412 is the source overwritten during
// the copy (its generation is pinned), or the destination's precondition;
// either way nothing was written and the saved token is of no further use.
// An interrupted copy keeps its token.
func (c *Client) copyError(ctx context.Context, r *Result, t *tracker, src URL, a *storage.ObjectAttrs, dst URL, o CopyOptions, err error) error {
	if ctx.Err() != nil {
		return err
	}
	if isStatus(err, 404) { // the pinned source generation is gone
		t.forget()
		return c.pinnedGone(ctx, "copy", src, a.Generation, dst.String(), fmt.Errorf("copy: %s -> %s: %w", src, dst, err))
	}
	if !errors.Is(err, resumable.ErrPreconditionFailed) {
		return fmt.Errorf("copy: %s -> %s: %w", src, dst, err)
	}
	t.forget()
	now, serr := c.Stat(ctx, src)
	switch {
	case errors.Is(serr, storage.ErrObjectNotExist):
		return fmt.Errorf("copy: the source %s was deleted during the copy (it was generation %d): nothing was written to %s: %w", src, a.Generation, dst, err)
	case serr == nil && now.Generation != a.Generation:
		return fmt.Errorf("copy: the source %s changed during the copy (generation %d, now %d): nothing was written to %s; copy again to copy the new generation: %w",
			src, a.Generation, now.Generation, dst, err)
	case o.NoClobber:
		r.Status, r.Note = StatusSkipped, "exists"
		return nil
	case o.IfGenerationMatch != nil && *o.IfGenerationMatch == 0:
		return fmt.Errorf("copy: %s: not written: the object exists (--if-generation-match 0: only if absent): %w", dst, err)
	case o.IfGenerationMatch != nil:
		return fmt.Errorf("copy: %s: the destination's live generation is not %d (--if-generation-match): nothing was written: %w", dst, *o.IfGenerationMatch, err)
	}
	return fmt.Errorf("copy: %s -> %s: %w", src, dst, err)
}
