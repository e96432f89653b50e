package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
	storage "google.golang.org/api/storage/v1"
)

// component uploads component i through the resumable chunk loop: its
// saved session if it has one, else a new one (ifGenerationMatch=0, so an
// object already there is never replaced) saved in the record before its
// first byte. A session the server lost starts over, as a whole file's
// does.
func (u *composite) component(ctx context.Context, i int) error {
	rc, err := u.c.resumable(u.events(i))
	if err != nil {
		return err
	}
	comp := u.get(i)
	src := componentSource{SectionReader: io.NewSectionReader(u.f, comp.Start, comp.End-comp.Start), file: checkedFile{u.f, u.fp}}
	if comp.Session == nil && u.c.wholeParts {
		// The component goes up in one request, whose X-Goog-Hash is its
		// CRC32C: computed while its session starts, not after.
		src.crc = crcAheadOf(ctx, src.SectionReader)
		defer src.crc.wait()
	}
	var s *resumable.Session
	if comp.Session != nil {
		saved := *comp.Session // the record keeps its own copy
		s = &saved
		s.Key = u.c.keyFor(ctx, s.KeySHA256)
		u.track(i, s, false)
	}
	for restarts := 0; ; restarts++ {
		if s == nil {
			if s, err = rc.Start(ctx, u.componentSpec(comp)); err != nil {
				if errors.Is(err, resumable.ErrPreconditionFailed) {
					return u.existing(ctx, i, err)
				}
				return err
			}
			s.ChunkSize = u.c.partChunk(s.ChunkSize, comp.End-comp.Start)
			u.track(i, s, true)
		}
		if err := u.clear(ctx); err != nil {
			return err
		}
		obj, err := rc.Upload(ctx, s, src)
		switch {
		case err == nil:
			return u.uploaded(i, obj)
		case errors.Is(err, resumable.ErrSessionExpired) && restarts < maxRestarts:
			u.track(i, nil, true)
			s = nil
			continue
		case errors.Is(err, resumable.ErrPreconditionFailed):
			u.track(i, nil, true) // finalizing found an object there: the session is finished
			return u.existing(ctx, i, err)
		case errors.Is(err, resumable.ErrChecksumMismatch):
			u.track(i, nil, true) // the session is finished or useless: never resume it
		}
		return err
	}
}

// componentSource is a component's bytes: a section of the file which,
// like checkedFile, tells resumable before the final request whether the
// file changed, and, with crc, gives it the CRC32C computed ahead.
type componentSource struct {
	*io.SectionReader
	file checkedFile
	crc  *crcAhead // nil: resumable hashes the bytes itself
}

func (s componentSource) CheckSource() error { return s.file.CheckSource() }

// Hashes is the component's CRC32C computed ahead (resumable.HashedSource).
func (s componentSource) Hashes() (resumable.Hashes, error) {
	if s.crc == nil {
		return resumable.Hashes{}, errNoCRCAhead
	}
	crc, err := s.crc.wait()
	return resumable.Hashes{CRC32C: crc, HasCRC32C: err == nil}, err
}

var errNoCRCAhead = errors.New("upload: no CRC32C computed ahead")

// crcAhead is the CRC32C of a component, computed on a goroutine of its
// own while the component's session starts: a round trip, against the
// 10-30 ms it takes to read and hash 32 MiB, which 8 components at once on
// 2 cores made longer, each delaying its one request by that much. Its
// owner waits for it before returning.
type crcAhead struct {
	done chan struct{}
	crc  uint32
	err  error
}

// crcAheadOf starts computing r's CRC32C; it stops early, with ctx's
// error, when ctx ends (a component can be large: its owner waits).
func crcAheadOf(ctx context.Context, r *io.SectionReader) *crcAhead {
	a := &crcAhead{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.crc, a.err = fileCRC32C(ctxReaderAt{ctx, r}, r.Size())
	}()
	return a
}

// ctxReaderAt is an io.ReaderAt that fails once ctx has ended.
type ctxReaderAt struct {
	ctx context.Context
	r   io.ReaderAt
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.ReadAt(p, off)
}

// wait returns the CRC32C once it is computed.
func (a *crcAhead) wait() (uint32, error) {
	<-a.done
	return a.crc, a.err
}

// componentSpec is the initiation of component comp's session: the
// destination's bucket, class and key (a compose takes sources of its own
// storage class only), never replacing an object.
func (u *composite) componentSpec(comp state.Component) resumable.ObjectSpec {
	return resumable.ObjectSpec{Bucket: u.dst.Bucket, Name: comp.Name, Size: comp.End - comp.Start,
		StorageClass: u.spec.StorageClass, KMSKeyName: u.spec.KMSKeyName, Key: u.spec.Key, DoesNotExist: true}
}

// get returns a copy of component i.
func (u *composite) get(i int) state.Component {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.rec.Upload.Components[i]
}

// track makes s the live session of component i, the one its upload
// updates and moved copies into the record; with save (a new session, or
// none) the record gets it now, before any byte is sent on it.
func (u *composite) track(i int, s *resumable.Session, save bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.live[i] = s
	if !save {
		return
	}
	comp := &u.rec.Upload.Components[i]
	comp.Session = nil
	if s != nil {
		copied := *s
		comp.Session = &copied
	}
	u.at[i], u.resuming[i] = 0, false // a new session resumes nothing saved
	u.save()
}

// moved records that component i's server offset is off: progress, and
// a copy of its live session in the record, saved, when the session moved.
// It runs on component i's goroutine (in its events), which is the one
// that updates the live session: reading it here races with nothing. mu
// is held.
func (u *composite) moved(i int, off int64) {
	u.at[i] = off
	s, comp := u.live[i], &u.rec.Upload.Components[i]
	if s == nil || comp.Session != nil && comp.Session.Persisted == s.Persisted && comp.Session.HashOffset == s.HashOffset {
		return
	}
	copied := *s
	comp.Session = &copied
	u.save()
}

// save writes the record as it is now, its Offset the bytes the server
// has of all components, and returns once a write that holds this change
// is on disk; a failure only costs the ability to resume in another
// process. mu is held on entry and on return, but not during the write:
// the other components go on sending meanwhile, and changes that arrive
// while one write runs share the next (a group commit: 8 components that
// start at once cost 2 writes, not 8 one after another, each an fsync that
// held up every stream).
func (u *composite) save() {
	if u.gone || u.pending || u.c.store == nil {
		return
	}
	u.changes++
	mine := u.changes
	u.mu.Unlock()
	defer u.mu.Lock()
	u.saveMu.Lock()
	defer u.saveMu.Unlock()
	if u.written >= mine {
		return // a write that began after this change has it
	}
	u.mu.Lock()
	if u.gone {
		u.mu.Unlock()
		return
	}
	snap, upto := u.snapshot(), u.changes
	u.mu.Unlock()
	err := u.c.store.Save(snap)
	u.mu.Lock()
	u.written = upto
	if u.rec.Created.IsZero() {
		u.rec.Created = snap.Created
	}
	if err != nil {
		u.c.saveFailed(u.r, err)
	}
	u.r.Saved = err == nil || u.r.Saved
	u.mu.Unlock()
}

// snapshot is a copy of the record for a write outside mu, with its
// Offset: the record's own slices are not shared with the copy (a session
// in it is never changed in place, only replaced). mu is held.
func (u *composite) snapshot() *state.Record {
	rec, up := *u.rec, *u.rec.Upload
	up.Components = slices.Clone(up.Components)
	rec.Upload, rec.Offset = &up, 0
	for _, comp := range up.Components {
		switch {
		case comp.Done():
			rec.Offset += comp.End - comp.Start
		case comp.Session != nil:
			rec.Offset += comp.Session.Persisted
		}
	}
	return &rec
}

// uploaded records component i's object: its generation and CRC32C.
func (u *composite) uploaded(i int, obj *storage.Object) error {
	crc, err := resumable.DecodeCRC32C(obj.Crc32c)
	if err != nil || obj.Generation <= 0 {
		return fmt.Errorf("upload: component %d of %s: the server did not report its generation and crc32c", i, u.dst)
	}
	u.done(i, obj.Generation, crc)
	return nil
}

// done marks component i uploaded and saves the record.
func (u *composite) done(i int, gen int64, crc uint32) {
	u.mu.Lock()
	defer u.mu.Unlock()
	comp := &u.rec.Upload.Components[i]
	comp.Session, comp.Generation, comp.CRC32C = nil, gen, crc
	u.at[i], u.live[i] = comp.End-comp.Start, nil
	u.save()
}

// existing decides what a 412 on component i means: an object already
// there (an earlier run's, whose record was lost or expired) with the
// component's size and CRC32C is the component, uploaded; anything else
// is an error that names it.
func (u *composite) existing(ctx context.Context, i int, cause error) error {
	comp := u.get(i)
	name := URL{Bucket: u.dst.Bucket, Object: comp.Name}
	crc, err := fileCRC32C(io.NewSectionReader(u.f, comp.Start, comp.End-comp.Start), comp.End-comp.Start)
	if err != nil {
		return err
	}
	attrs, err := u.c.Stat(ctx, name)
	if err == nil && attrs.Size == comp.End-comp.Start && attrs.CRC32C == crc {
		u.done(i, attrs.Generation, crc)
		return nil
	}
	if err == nil {
		err = fmt.Errorf("it has %d bytes and crc32c %s", attrs.Size, resumable.EncodeCRC32C(attrs.CRC32C))
	}
	return fmt.Errorf("upload: component %d of %s: %s exists and is not bytes %d-%d of %s (%v); delete it, or cancel with 'gcsput sessions cancel': %w",
		i, u.dst, name, comp.Start, comp.End-1, u.f.Name(), err, cause)
}

// events returns component i's event handler. Each component's resumable
// client delivers its events one at a time, but components run at once:
// the Result, the progress and the record are updated under mu. The
// events go on to Options.OnEvent with the component's own object name.
func (u *composite) events(i int) func(resumable.Event) {
	return func(e resumable.Event) {
		u.mu.Lock()
		switch e.Kind {
		case resumable.EventRetry:
			u.r.Attempts++
		case resumable.EventSent:
			// Bytes on the wire, also of attempts that failed (see tracker).
			u.r.Transferred += e.Length
			u.at[i] = e.Offset
		case resumable.EventChunk, resumable.EventStatus:
			u.moved(i, e.Persisted)
		case resumable.EventResumed:
			if u.resuming[i] {
				u.r.ResumedFrom += e.Offset
				u.resuming[i] = false
			}
			u.moved(i, e.Offset)
		}
		done := int64(0)
		for _, n := range u.at {
			done += n
		}
		u.mu.Unlock()
		u.c.progress(u.r, done, u.fp.Size)
		// Named as the user knows it: the file's object, part i+1 of N, not
		// the temporary component's name.
		e.Bucket, e.Object, e.Part, e.Parts = u.dst.Bucket, u.dst.Object, i+1, len(u.at)
		u.c.event(e)
	}
}
