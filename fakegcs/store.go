package fakegcs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"
)

// ObjectAttrs is the metadata of a stored object.
type ObjectAttrs struct {
	Bucket             string
	Name               string
	Size               int64
	Generation         int64
	Metageneration     int64
	ContentType        string
	ContentEncoding    string
	ContentDisposition string
	ContentLanguage    string
	CacheControl       string
	StorageClass       string
	Metadata           map[string]string
	// CustomTime is the object's customTime as written; zero when unset.
	CustomTime time.Time
	// CRC32C is the Castagnoli CRC of the content.
	CRC32C uint32
	// MD5 is the MD5 of the content; nil for composite objects and when
	// [Options].DisableMD5 is set.
	MD5 []byte
	// ComponentCount is the number of components of a composite object;
	// 0 for an object that was uploaded.
	ComponentCount int64
	// CustomerKeySHA256 is the SHA256 (base64) of the customer-supplied
	// encryption key the object was written with, "" for none: every read
	// of its content must carry that key.
	CustomerKeySHA256 string
	// KMSKeyName is the Cloud KMS key the object was written under
	// (kmsKeyName, destinationKmsKeyName), reported as given.
	KMSKeyName string
	// TemporaryHold and EventBasedHold keep the object from being deleted or
	// replaced while set; Retention is its own retention configuration, nil
	// for none (see [ObjectRetention]).
	TemporaryHold, EventBasedHold bool
	Retention                     *ObjectRetention
	Created                       time.Time
	Updated                       time.Time
	// Deleted is when the generation stopped being live (timeDeleted):
	// set on noncurrent and soft-deleted generations.
	Deleted time.Time
	// SoftDeleteTime and HardDeleteTime are set on a soft-deleted
	// generation: when it was deleted, and when it is freed for good.
	SoftDeleteTime, HardDeleteTime time.Time

	// isFolder marks a listing's entry that stands for an HNS folder
	// (includeFoldersAsPrefixes): it gives a prefix, never an item.
	isFolder bool
}

func (a ObjectAttrs) clone() ObjectAttrs {
	a.Metadata = maps.Clone(a.Metadata)
	a.MD5 = bytes.Clone(a.MD5)
	if a.Retention != nil {
		r := *a.Retention
		a.Retention = &r
	}
	return a
}

type object struct {
	attrs ObjectAttrs
	blob  blob
	acl   []aclEntry
}

type bucket struct {
	name           string
	created        time.Time
	updated        time.Time
	metageneration int64
	objects        *objectIndex // live objects by name, in name order

	acl, defaultACL  []aclEntry
	iam              *iamPolicy // nil: made from acl when first asked
	notifications    []*notification
	lastNotification int
	retention        *retention
	// storageClass is the default class of new objects ("STANDARD" when
	// ""); defaultHold is defaultEventBasedHold: new objects are
	// created under an event-based hold.
	storageClass string
	defaultHold  bool
	// objectRetention: created with enableObjectRetention, its objects may
	// carry a retention configuration of their own.
	objectRetention bool
	// requesterPays refuses requests without a userProject (billing.go).
	requesterPays bool
	// versioning keeps replaced and deleted live generations as noncurrent;
	// softDelete (0: off) keeps deleted generations that long, since
	// softDeleteSince (softdelete.go).
	versioning      bool
	softDelete      time.Duration
	softDeleteSince time.Time
	// old holds each name's noncurrent and soft-deleted generations.
	old map[string][]*object
	// expiry is no later than the earliest hardDeleteTime in old (zero:
	// none is soft-deleted), so expire walks old only when one may be due,
	// not on every listing page and read.
	expiry time.Time
	// hns: hierarchical namespace, with folders by name (each ending
	// with "/"; folders.go).
	hns     bool
	folders map[string]*folder
}

var (
	// ErrBucketNotFound is returned by helpers for a bucket that does not exist.
	ErrBucketNotFound = errors.New("fakegcs: bucket not found")
	// ErrObjectNotFound is returned by helpers for an object that does not exist.
	ErrObjectNotFound = errors.New("fakegcs: object not found")
)

// class is the bucket's default storage class; s.mu is held.
func (b *bucket) class() string {
	if b.storageClass == "" {
		return "STANDARD"
	}
	return b.storageClass
}

// CreateBucket creates a bucket; it is not an error if it exists.
func (s *Server) CreateBucket(name string) error {
	if err := s.validBucket(name); err != nil {
		return fmt.Errorf("fakegcs: %w", err)
	}
	if name == "" {
		return errors.New("fakegcs: empty bucket name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.buckets[name]; !ok {
		now := s.now()
		s.buckets[name] = &bucket{name: name, created: now, updated: now, metageneration: 1, objects: newObjectIndex(), folders: map[string]*folder{},
			acl: defaultBucketACL(), defaultACL: defaultObjectACL()}
	}
	return nil
}

// PutObject stores data as bucket/name (a new generation if it exists).
func (s *Server) PutObject(bucket, name string, data []byte) (ObjectAttrs, error) {
	return s.PutObjectFrom(ObjectAttrs{Bucket: bucket, Name: name}, bytes.NewReader(data))
}

// PutObjectFrom stores the bytes of r as attrs.Bucket/attrs.Name, streamed
// into the backend, with attrs' content type, encoding, cache control,
// disposition, language and metadata. Size, hashes and generations are
// computed.
func (s *Server) PutObjectFrom(attrs ObjectAttrs, r io.Reader) (ObjectAttrs, error) {
	w, err := s.be.create()
	if err != nil {
		return ObjectAttrs{}, err
	}
	h := newHasher(!s.opts.DisableMD5)
	if _, err := ingest(r, w, &h); err != nil {
		w.abort()
		return ObjectAttrs{}, err
	}
	b, err := w.commit()
	if err != nil {
		return ObjectAttrs{}, err
	}
	attrs.CRC32C, attrs.MD5 = h.sum()
	attrs.Size = b.size()
	o, apiErr := s.commitObject(attrs, b, conds{})
	if apiErr != nil {
		return ObjectAttrs{}, fmt.Errorf("fakegcs: %w", apiErr)
	}
	return o, nil
}

// Object returns the content and attributes of bucket/name. With
// BackendDiscard the content is zeros of the object's size.
func (s *Server) Object(bucket, name string) ([]byte, ObjectAttrs, error) {
	ref, err := s.acquire(bucket, name)
	if err != nil {
		return nil, ObjectAttrs{}, err
	}
	defer ref.done()
	rc, err := ref.blob.open(0, ref.blob.size())
	if err != nil {
		return nil, ObjectAttrs{}, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	return data, ref.attrs, err
}

// Attrs returns the attributes of bucket/name.
func (s *Server) Attrs(bucket, name string) (ObjectAttrs, error) {
	ref, err := s.acquire(bucket, name)
	if err != nil {
		return ObjectAttrs{}, err
	}
	ref.done()
	return ref.attrs, nil
}

// ObjectNames lists the object names of a bucket, sorted.
func (s *Server) ObjectNames(bucket string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return nil, ErrBucketNotFound
	}
	return b.objects.all(), nil
}

// DeleteObject deletes the live generation of bucket/name as a delete
// request without a generation does: noncurrent in a bucket with
// versioning, soft-deleted under a soft delete policy, gone otherwise.
func (s *Server) DeleteObject(bucket, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return ErrBucketNotFound
	}
	o := b.objects.remove(name)
	if o == nil {
		return ErrObjectNotFound
	}
	s.retire(b, o)
	return nil
}

// checkLive tests write preconditions against the live generation of
// bucket/name (none when the bucket or object is missing).
func (s *Server) checkLive(bucket, name string, c conds) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	var o *object
	if b, ok := s.buckets[bucket]; ok {
		o = b.objects.get(name)
	}
	return c.check(o, false)
}

// lookup finds bucket/name. The object it returns may be read only under
// s.mu; a request that reads it later takes an objectRef ([Server.acquire]).
func (s *Server) lookup(bucket, name string) (*object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return nil, ErrBucketNotFound
	}
	o := b.objects.get(name)
	if o == nil {
		return nil, ErrObjectNotFound
	}
	return o, nil
}

// objectRef is one generation of an object as a request found it: its
// attributes as they were then and its blob, acquired so that it stays
// readable after Server.mu is released even if the object is replaced,
// deleted or patched meanwhile. done releases the blob.
type objectRef struct {
	attrs ObjectAttrs
	blob  blob
}

func (r objectRef) done() {
	if r.blob != nil {
		r.blob.release()
	}
}

// acquire finds bucket/name and takes an objectRef of its live generation.
func (s *Server) acquire(bucket, name string) (objectRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return objectRef{}, ErrBucketNotFound
	}
	o := b.objects.get(name)
	if o == nil {
		return objectRef{}, ErrObjectNotFound
	}
	o.blob.acquire()
	return objectRef{attrs: o.attrs.clone(), blob: o.blob}, nil
}

// getObject is acquire for a request: a missing bucket or object is GCS's
// 404.
func (s *Server) getObject(bucket, name string) (objectRef, *apiError) {
	ref, err := s.acquire(bucket, name)
	switch {
	case errors.Is(err, ErrBucketNotFound):
		return ref, errNoBucket
	case err != nil:
		return ref, errf(404, "notFound", "No such object: %s/%s", bucket, name)
	}
	return ref, nil
}

// nextGeneration returns a generation number: microseconds since the epoch
// like GCS's, made strictly increasing. Called with s.mu held.
func (s *Server) nextGeneration() int64 {
	g := s.now().UnixMicro()
	if g <= s.lastGen {
		g = s.lastGen + 1
	}
	s.lastGen = g
	return g
}

// commitObject makes content the live generation of attrs.Bucket/attrs.Name
// if the preconditions hold. attrs carries size and hashes; generation,
// metageneration and times are assigned here. The blob is released on
// failure and the replaced generation's blob on success.
func (s *Server) commitObject(attrs ObjectAttrs, content blob, c conds) (ObjectAttrs, *apiError) {
	if err := s.validObject(attrs.Name); err != nil {
		content.release()
		return ObjectAttrs{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[attrs.Bucket]
	if !ok {
		content.release()
		return ObjectAttrs{}, errNoBucket
	}
	old := b.objects.get(attrs.Name)
	err := c.check(old, false)
	if err == nil {
		err = s.retained(b, old)
	}
	if err == nil {
		err = s.checkNewRetention(b, attrs.Retention)
	}
	if err != nil {
		content.release()
		return ObjectAttrs{}, err
	}
	now := s.now()
	attrs.Generation = s.nextGeneration()
	attrs.Metageneration = 1
	// A copy of a noncurrent generation is live: not deleted.
	attrs.Deleted, attrs.SoftDeleteTime, attrs.HardDeleteTime = time.Time{}, time.Time{}, time.Time{}
	attrs.Created, attrs.Updated = now, now
	if attrs.StorageClass == "" {
		attrs.StorageClass = b.class()
	}
	attrs.EventBasedHold = attrs.EventBasedHold || b.defaultHold
	if attrs.ContentType == "" {
		attrs.ContentType = "application/octet-stream"
	}
	attrs.Size = content.size()
	b.addParents(attrs.Name, now)
	b.objects.set(attrs.Name, &object{attrs: attrs.clone(), blob: content, acl: append([]aclEntry(nil), b.defaultACL...)})
	if old != nil {
		s.retire(b, old)
	}
	return attrs, nil
}

// ingest streams r into w in quantum-sized blocks, each hashed once, on
// the pipe's goroutine while the next block is read; a body that fits in one
// block is hashed in place. The hasher may be read when ingest returns.
func ingest(r io.Reader, w contentWriter, h *hasher) (int64, error) {
	var hp *hashPipe // started at the first block that is not the last
	defer func() {
		if hp != nil {
			hp.wait()
		}
	}()
	var total int64
	for {
		buf := getBlock()
		n, err := readBlock(r, buf)
		if n == 0 {
			putBlock(buf)
		} else {
			total += int64(n)
			kept, werr := w.write(buf[:n])
			if hp == nil && err == io.EOF {
				// The whole body in one block (a small upload): hash it
				// here instead of starting the pipe's goroutine for it.
				h.write(buf[:n])
				if !kept {
					putBlock(buf)
				}
			} else {
				if hp == nil {
					hp = newHashPipe(h)
				}
				hp.add(buf[:n], !kept)
			}
			if werr != nil {
				return total, werr
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// readBlock fills buf from r. It returns io.EOF (possibly with n > 0) only
// at a clean end of r, and any other error as is: unlike io.ReadFull it
// never turns a short final block into io.ErrUnexpectedEOF, which here means
// a client that went away.
func readBlock(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
