package upload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/fill"
	"github.com/gcsput/gcsput/internal/state"
)

// bucketChecks is what a Client learned of each bucket for composite
// uploads, safe for concurrent use: each bucket's settings are read once.
type bucketChecks struct {
	mu sync.Mutex
	m  map[string]*bucketCheck
}

// bucketCheck is one bucket's: mu is held while its settings are read, so
// concurrent uploads into it make one request.
type bucketCheck struct {
	mu      sync.Mutex
	known   bool          // why is the answer
	why     string        // why composing into the bucket is not safe; "" when it is
	soft    time.Duration // the bucket's soft delete retention (0: off)
	noticed bool          // the notice about composite objects was given
	warned  bool          // the warning that large files go up whole was given
}

func (b *bucketChecks) get(bucket string) *bucketCheck {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]*bucketCheck{}
	}
	bc := b.m[bucket]
	if bc == nil {
		bc = &bucketCheck{}
		b.m[bucket] = bc
	}
	return bc
}

// componentSize returns the size per of the components of a file of size
// bytes whose components have at least least bytes, and their number n:
// at most state.MaxComponents, each of per bytes but the last.
func componentSize(size, least int64) (per, n int64) {
	return fill.ComponentSize(size, least, state.MaxComponents)
}

// composes decides whether a file of size bytes goes up to dst, with attrs
// a, as a composite upload: never with ParallelOff, or below
// ParallelThreshold, or when it would have fewer than 2 components; always
// with ParallelOn; with ParallelAuto only when safeToCompose finds no
// reason against it, and otherwise says why, once per bucket. Before the
// first composite upload into a bucket, a notice says that composite
// objects have no MD5.
func (c *Client) composes(ctx context.Context, size int64, dst URL, a Attrs) bool {
	ok, v := c.composesAhead(ctx, size, dst, a)
	if !ok || v == nil {
		return ok
	}
	<-v.done
	return c.composeVerdict(dst, v)
}

// composesAhead is composes without waiting for the bucket's settings
// when they are not known yet: it reads them in the background (v, nil
// when the answer is known) while the caller starts the components'
// sessions, which send no byte before v is in (composite.clear). One
// after the other the settings (a TLS handshake and a GET) and the
// sessions (the same) cost a large upload two round trips more (on the
// 60 ms wire model, 0.12 s of 2.2).
func (c *Client) composesAhead(ctx context.Context, size int64, dst URL, a Attrs) (bool, *verdict) {
	o := c.opts
	if _, n := componentSize(size, c.componentLeast(size)); o.ParallelUpload == ParallelOff || o.ParallelThreshold < 0 || size < o.ParallelThreshold || n < 2 {
		return false, nil
	}
	bc := c.buckets.get(dst.Bucket)
	v := &verdict{bc: bc, done: make(chan struct{})}
	if o.ParallelUpload != ParallelAuto {
		close(v.done)
		return c.composeVerdict(dst, v), nil
	}
	if a.StorageClass != "" && !standardClass(a.StorageClass) || bc.isKnown() {
		v.why, v.err = c.unsafeToCompose(ctx, bc, dst.Bucket, a)
		close(v.done)
		return c.composeVerdict(dst, v), nil
	}
	go func() {
		defer close(v.done)
		v.why, v.err = c.unsafeToCompose(ctx, bc, dst.Bucket, a)
	}()
	return true, v
}

// verdict is whether a composite upload may go into a bucket: why it may
// not ("" when it may), or err when reading the bucket's settings was
// interrupted; both valid once done is closed.
type verdict struct {
	bc   *bucketCheck
	done chan struct{}
	why  string
	err  error
}

// ready is closed once v is in; a nil v (known before) is ready.
func (v *verdict) ready() <-chan struct{} {
	if v == nil {
		return verdictKnown
	}
	return v.done
}

// verdictKnown is the ready channel of a verdict known before (nil).
var verdictKnown = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// composeVerdict reports whether v lets the upload to dst compose, with
// the warning (why not) or the notice (no MD5), each once per bucket.
func (c *Client) composeVerdict(dst URL, v *verdict) bool {
	if v.err != nil {
		return false // interrupted: the upload that follows says so
	}
	if v.why != "" {
		if v.bc.once(&v.bc.warned) {
			c.warn(fmt.Sprintf("gs://%s: large files are uploaded whole, not as composite objects: %s (--parallel-upload on to compose anyway)", dst.Bucket, v.why))
		}
		return false
	}
	if v.bc.once(&v.bc.noticed) {
		c.warn(fmt.Sprintf("gs://%s: large files are uploaded as composite objects: they carry a CRC32C but no MD5 (--parallel-upload off to avoid)", dst.Bucket))
	}
	return true
}

// isKnown reports whether the bucket's settings were read.
func (bc *bucketCheck) isKnown() bool {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	return bc.known
}

// once sets *flag and reports whether it was not set before.
func (bc *bucketCheck) once(flag *bool) bool {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	first := !*flag
	*flag = true
	return first
}

// unsafeToCompose says why a composite upload into bucket with attrs a
// could cost more than a plain one or leave its components behind, or ""
// when it is safe: a storage class other than Standard charges early
// deletion for the components, a retention policy or a default event-based
// hold keeps them from being deleted. The bucket's settings are read once
// per Client; a bucket whose settings cannot be read (no
// storage.buckets.get permission) is not composed into either.
func (c *Client) unsafeToCompose(ctx context.Context, bc *bucketCheck, bucket string, a Attrs) (string, error) {
	if a.StorageClass != "" && !standardClass(a.StorageClass) {
		return fmt.Sprintf("the upload's storage class is %s, which charges the components for early deletion", a.StorageClass), nil
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if bc.known {
		return bc.softWhy(c.keepsSources.Load()), nil
	}
	var attrs *storage.BucketAttrs
	err := c.runner.Do(ctx, func(ctx context.Context) error {
		var err error
		attrs, err = c.bucket(bucket).Attrs(ctx)
		return permanentIfMissing(err)
	})
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err() // not remembered: the next upload asks again
	case err != nil:
		bc.why = fmt.Sprintf("its settings could not be read (%v)", err)
	default:
		bc.why, bc.soft = bucketUnsafe(attrs), softDeleteOf(attrs)
	}
	bc.known = true
	return bc.softWhy(c.keepsSources.Load()), nil
}

// softWhy is the bucket's verdict, with its soft delete policy weighed: GCS
// deletes the components hard when it composes (deleteSourceObjects), so
// soft delete costs nothing more, unless the endpoint was found to leave
// them (keeps): deleted one by one, each is kept and billed for the
// retention. bc.mu is held.
func (bc *bucketCheck) softWhy(keeps bool) string {
	if bc.why == "" && keeps && bc.soft > 0 {
		return fmt.Sprintf("it keeps deleted objects for %s (soft delete) and this endpoint leaves the components of a compose for gcsput to delete, so each would be billed that long", fmtDays(bc.soft))
	}
	return bc.why
}

// fmtDays writes a retention as GCS states it: whole days, else the duration.
func fmtDays(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		if d == 24*time.Hour {
			return "1 day"
		}
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}

// bucketUnsafe is unsafeToCompose's verdict on a bucket's settings.
func bucketUnsafe(attrs *storage.BucketAttrs) string {
	switch {
	case !standardClass(attrs.StorageClass):
		return fmt.Sprintf("its default storage class is %s, which charges the components for early deletion", attrs.StorageClass)
	case attrs.RetentionPolicy != nil && attrs.RetentionPolicy.RetentionPeriod > 0:
		return "it has a retention policy, which keeps the components from being deleted"
	case attrs.DefaultEventBasedHold:
		return "it holds new objects (default event-based hold), which keeps the components from being deleted"
	}
	return ""
}

// standardClass reports a storage class with no minimum storage duration:
// STANDARD and its older names (GCS reports the bucket's class; "" is an
// object's "the bucket's default").
func standardClass(class string) bool {
	switch class {
	case "", "STANDARD", "MULTI_REGIONAL", "REGIONAL", "DURABLE_REDUCED_AVAILABILITY":
		return true
	}
	return false
}
