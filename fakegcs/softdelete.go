package fakegcs

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Object versioning and soft delete, as GCS documents them
// (cloud.google.com/storage/docs/object-versioning, /soft-delete,
// /json_api/v1/objects/delete, /json_api/v1/objects/restore):
//
//   - Replacing or deleting the live generation in a bucket with versioning
//     makes it noncurrent (timeDeleted set); it stays readable by generation
//     and listed with versions=true.
//   - Without versioning, or when a delete names the generation, the
//     generation is gone: soft-deleted when the bucket has a soft delete
//     policy (softDeleteTime, and hardDeleteTime = softDeleteTime +
//     retentionDurationSeconds), freed otherwise.
//   - A soft-deleted generation cannot be read or deleted (404); it is
//     listed with softDeleted=true, read with softDeleted=true and its
//     generation, and restored (objects.restore) as a new live generation.
//     It is freed at its hardDeleteTime.
//   - compose with deleteSourceObjects deletes its sources hard: they are
//     never soft-deleted nor noncurrent.

// Soft delete retention bounds (cloud.google.com/storage/docs/soft-delete):
// 0 turns soft delete off; otherwise 7 to 90 days.
const (
	minSoftDelete = 7 * 24 * time.Hour
	maxSoftDelete = 90 * 24 * time.Hour
)

// ErrGenerationNotFound is returned by helpers for a generation that is
// neither live, noncurrent nor soft-deleted.
var ErrGenerationNotFound = errors.New("fakegcs: generation not found")

// softDeleted reports whether o is a soft-deleted generation.
func (o *object) softDeleted() bool { return !o.attrs.SoftDeleteTime.IsZero() }

// retire takes o, the live generation of its name just replaced or
// deleted without a generation, out of the live set's way: noncurrent with
// versioning, else as dropGen. s.mu is held; o is no longer in b.objects.
func (s *Server) retire(b *bucket, o *object) {
	now := s.now()
	if b.versioning {
		o.attrs.Deleted = now
		s.keepOld(b, o)
		return
	}
	s.dropGen(b, o, now)
}

// dropGen deletes generation o for good: soft-deleted under b's policy,
// freed without one. s.mu is held; o is in no map.
func (s *Server) dropGen(b *bucket, o *object, now time.Time) {
	if b.softDelete <= 0 {
		o.blob.release()
		return
	}
	if o.attrs.Deleted.IsZero() {
		o.attrs.Deleted = now
	}
	o.attrs.SoftDeleteTime = now
	o.attrs.HardDeleteTime = now.Add(b.softDelete)
	s.keepOld(b, o)
}

func (s *Server) keepOld(b *bucket, o *object) {
	if b.old == nil {
		b.old = map[string][]*object{}
	}
	b.old[o.attrs.Name] = append(b.old[o.attrs.Name], o)
	if t := o.attrs.HardDeleteTime; o.softDeleted() && (b.expiry.IsZero() || t.Before(b.expiry)) {
		b.expiry = t
	}
}

// expire frees b's soft-deleted generations past their hardDeleteTime.
// It walks b.old only once the earliest of them may be due (b.expiry), and
// then notes the next. s.mu is held.
func (s *Server) expire(b *bucket) {
	now := s.now()
	if b.expiry.IsZero() || now.Before(b.expiry) {
		return
	}
	b.expiry = time.Time{}
	for name, gens := range b.old {
		kept := gens[:0]
		for _, o := range gens {
			if !o.softDeleted() {
				kept = append(kept, o)
				continue
			}
			if t := o.attrs.HardDeleteTime; !now.Before(t) {
				o.blob.release()
				continue
			} else if b.expiry.IsZero() || t.Before(b.expiry) {
				b.expiry = t
			}
			kept = append(kept, o)
		}
		clear(gens[len(kept):])
		if len(kept) == 0 {
			delete(b.old, name)
		} else {
			b.old[name] = kept
		}
	}
}

// oldGen finds generation gen of name among b's noncurrent (soft false) or
// soft-deleted (soft true) generations; -1 and nil when there is none.
// s.mu is held.
func oldGen(b *bucket, name string, gen int64, soft bool) (int, *object) {
	for i, o := range b.old[name] {
		if o.attrs.Generation == gen && o.softDeleted() == soft {
			return i, o
		}
	}
	return -1, nil
}

// removeOld takes the i-th old generation of name out of b.old. s.mu is held.
func removeOld(b *bucket, name string, i int) {
	b.old[name] = slices.Delete(b.old[name], i, i+1)
	if len(b.old[name]) == 0 {
		delete(b.old, name)
	}
}

// acquireGen takes an objectRef of generation gen of bucket/name: the live
// one when gen is 0, a live or noncurrent one otherwise, or with soft a
// soft-deleted one (gen required).
func (s *Server) acquireGen(bucket, name string, gen int64, soft bool) (objectRef, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return objectRef{}, errNoBucket
	}
	s.expire(b)
	var o *object
	switch live := b.objects.get(name); {
	case soft && gen == 0:
		return objectRef{}, errf(400, "required", "A generation is required to read a soft-deleted object: %s/%s", bucket, name)
	case soft:
		_, o = oldGen(b, name, gen, true)
	case gen == 0 || (live != nil && live.attrs.Generation == gen):
		o = live
	default:
		_, o = oldGen(b, name, gen, false)
	}
	if o == nil {
		if gen != 0 {
			return objectRef{}, errf(404, "notFound", "No such object: %s/%s#%d", bucket, name, gen)
		}
		return objectRef{}, errf(404, "notFound", "No such object: %s/%s", bucket, name)
	}
	o.blob.acquire()
	return objectRef{attrs: o.attrs.clone(), blob: o.blob}, nil
}

// parseGen reads a generation parameter ("" is 0, none).
func parseGen(v string) (int64, *apiError) {
	if v == "" {
		return 0, nil
	}
	g, err := strconv.ParseInt(v, 10, 64)
	if err != nil || g < 0 {
		return 0, errf(400, "invalid", "Invalid generation %q", v)
	}
	return g, nil
}

// serveRestore answers POST .../o/OBJECT/restore?generation=G: the
// soft-deleted generation G becomes a new live generation (new generation
// number, metageneration 1, created now, no soft-delete times), with the
// bucket's default object ACL unless copySourceAcl=true. The live
// generation it replaces is retired as an overwrite retires it. The
// soft-deleted generation stays soft-deleted. ifGenerationMatch and the
// other preconditions apply to the live generation.
func (s *Server) serveRestore(x *exchange) {
	q := x.r.URL.Query()
	if q.Get("generation") == "" {
		x.fail(errf(400, "required", "Required parameter: generation"))
		return
	}
	gen, apiErr := parseGen(q.Get("generation"))
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	c, apiErr := parseConds(q, nil, "if")
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	out, apiErr := s.restore(x.ri.bucket, x.ri.object, gen, c, q.Get("copySourceAcl") == "true")
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	x.writeObject(out)
}

func (s *Server) restore(bucket, name string, gen int64, c conds, copyACL bool) (ObjectAttrs, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return ObjectAttrs{}, errNoBucket
	}
	s.expire(b)
	_, src := oldGen(b, name, gen, true)
	if src == nil {
		return ObjectAttrs{}, errf(404, "notFound", "No such object: %s/%s#%d (no soft-deleted generation)", bucket, name, gen)
	}
	live := b.objects.get(name)
	apiErr := c.check(live, false)
	if apiErr == nil {
		apiErr = s.retained(b, live)
	}
	if apiErr != nil {
		return ObjectAttrs{}, apiErr
	}
	now := s.now()
	a := src.attrs.clone()
	a.Generation, a.Metageneration = s.nextGeneration(), 1
	a.Created, a.Updated = now, now
	a.Deleted, a.SoftDeleteTime, a.HardDeleteTime = time.Time{}, time.Time{}, time.Time{}
	acl := b.defaultACL
	if copyACL {
		acl = src.acl
	}
	src.blob.acquire()
	b.objects.set(name, &object{attrs: a.clone(), blob: src.blob, acl: append([]aclEntry(nil), acl...)})
	if live != nil {
		s.retire(b, live)
	}
	return a, nil
}

// SetSoftDelete sets bucket's soft delete retention, as a bucket patch of
// softDeletePolicy.retentionDurationSeconds does: 0 turns it off, otherwise
// 7 to 90 days. Generations already soft-deleted keep their hardDeleteTime.
func (s *Server) SetSoftDelete(bucket string, retention time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return ErrBucketNotFound
	}
	if apiErr := s.setSoftDelete(b, int64(retention/time.Second)); apiErr != nil {
		return fmt.Errorf("fakegcs: %w", apiErr)
	}
	return nil
}

// SetVersioning turns object versioning of bucket on or off.
func (s *Server) SetVersioning(bucket string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return ErrBucketNotFound
	}
	b.versioning = on
	return nil
}

// setSoftDelete validates and sets b's retention in seconds; s.mu is held.
func (s *Server) setSoftDelete(b *bucket, secs int64) *apiError {
	d := time.Duration(secs) * time.Second
	if secs != 0 && (secs < 0 || d < minSoftDelete || d > maxSoftDelete) {
		return errf(400, "invalid", "Invalid soft delete retention duration %ds: 0 (off), or from %d to %d seconds (7 to 90 days)",
			secs, int64(minSoftDelete/time.Second), int64(maxSoftDelete/time.Second))
	}
	if d != b.softDelete || b.softDeleteSince.IsZero() {
		b.softDeleteSince = s.now()
	}
	b.softDelete = d
	return nil
}

// Generations returns every generation of bucket/name that fakegcs keeps:
// noncurrent and soft-deleted ones oldest first, then the live one.
func (s *Server) Generations(bucket, name string) ([]ObjectAttrs, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return nil, ErrBucketNotFound
	}
	s.expire(b)
	var out []ObjectAttrs
	for _, o := range b.old[name] {
		out = append(out, o.attrs.clone())
	}
	if o := b.objects.get(name); o != nil {
		out = append(out, o.attrs.clone())
	}
	slices.SortFunc(out, func(a, b ObjectAttrs) int { return cmpInt(a.Generation, b.Generation) })
	return out, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// hasNoncurrent reports whether b keeps a noncurrent generation; s.mu is
// held.
func (b *bucket) hasNoncurrent() bool {
	for _, gens := range b.old {
		for _, o := range gens {
			if !o.softDeleted() {
				return true
			}
		}
	}
	return false
}
