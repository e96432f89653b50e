package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"sync"
	"sync/atomic"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	raw "google.golang.org/api/storage/v1"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/internal/aimd"
	"github.com/gcsput/gcsput/internal/manifest"
	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/internal/sumcache"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/retry"
)

// Client uploads and downloads with resumable, verified transfers. It is safe
// for concurrent use, Close included. Close it when done: Close cancels what
// is in flight (saved, to resume later), waits for it, and releases the
// connections; see [Client.Close].
type Client struct {
	opts     Options
	http     *http.Client
	endpoint string
	gcs      *storage.Client
	raw      *raw.Service
	store    *state.Store    // nil with NoState
	sums     *sumcache.Cache // nil without a store, or with NoChecksumCache
	runner   *retry.Runner
	streams  streams      // Options.Parallelism data streams
	buckets  bucketChecks // what composite uploads learned of each bucket
	// manifest is Options.Manifest, open (nil without one); manifestWarn
	// warns once of a row it could not write.
	manifest     *manifest.Manifest
	manifestWarn sync.Once
	// windows decides how many requests are in flight to each bucket
	// (capacity.go).
	windows *aimd.Buckets
	// keepsSources: a compose with deleteSourceObjects left its sources
	// (a server that ignores the field); composite.go deletes them then.
	keepsSources atomic.Bool
	// saveWarned: a failed save of a transfer's state was warned about.
	saveWarned atomic.Bool
	stops      stopWatch // requests to stop the transfers holding a lock
	// noBilling: the first requester-pays refusal (ErrUserProjectMissing),
	// which ends every transfer not yet started (keys.go).
	noBilling atomic.Pointer[error]
	life      *life  // what Close ends
	meter     *meter // Options.BatchProgress's totals
	idle      func() // closes the idle connections of the transport New made
	// shown maps a compressed copy CopyAll uploads (gzip) to the file it
	// was made from: its progress names the user's file.
	shown sync.Map
	// wholeParts: ChunkSize was left at its default, so a component goes up
	// from the file in one request (see partChunk).
	wholeParts bool
}

// New checks opts, finds credentials (unless opts.HTTPClient is given) and
// returns a Client. Bad options (e.g. a chunk size that is not a multiple of
// 256 KiB, an Endpoint that is not an http(s) URL) are errors matching
// ErrBadOption; no request is made. A bad STORAGE_EMULATOR_HOST (the
// environment, not an option) matches auth.ErrBadEndpoint alone.
func New(ctx context.Context, opts Options) (*Client, error) {
	wholeParts := opts.ChunkSize == 0
	opts, err := checkOptions(opts)
	if err != nil {
		return nil, err
	}
	var warnings []string
	if most := maxParallelism(); most > 0 && opts.Parallelism > most {
		warnings = append(warnings, fmt.Sprintf("transferring %d files at once instead of %d: the open-file limit (ulimit -n) is %d, and each transfer may hold %d",
			most, opts.Parallelism, openFileLimit(), fdsPerWorker))
		opts.Parallelism = most
	}
	a := opts.Auth
	if a.Endpoint == "" {
		a.Endpoint = opts.Endpoint
	}
	if a.Parallelism == 0 {
		a.Parallelism = opts.Parallelism
	}
	if opts.HTTPClient != nil {
		a.HTTPClient = opts.HTTPClient
	}
	ac, err := auth.New(ctx, a)
	if errors.Is(err, auth.ErrBadEndpoint) && a.Endpoint != "" {
		return nil, fmt.Errorf("upload: %w: %w", ErrBadOption, err) // an option, not the environment
	}
	if err != nil {
		return nil, err
	}
	l := newLife()
	c := &Client{opts: opts, wholeParts: wholeParts, endpoint: ac.Endpoint, runner: opts.Retry,
		streams: make(streams, opts.Parallelism), life: l, idle: ac.CloseIdleConnections,
		meter: newMeter(opts.BatchProgress, opts.Now), windows: aimd.NewBuckets(opts.Parallelism, aimd.Tuning{})}
	c.meter.windows = c.windows
	c.http = resumable.OriginRedirects(withTokens(ac.HTTPClient, l, ac.Endpoint, c.capacity()), ac.Endpoint)
	if c.runner == nil {
		c.runner = &retry.Runner{}
	}
	for _, w := range append(warnings, ac.Warnings...) {
		c.warn(w)
	}
	if !opts.NoState {
		if c.store, err = state.Open(opts.StateDir); err != nil {
			return nil, fmt.Errorf("upload: %w", err)
		}
		c.store.Now, c.store.Warn = opts.Now, opts.Warn
		if !opts.NoChecksumCache {
			c.sums = sumcache.Open(opts.StateDir, c.warn)
			c.sums.Now = opts.Now
		}
	}
	// The storage client shares our HTTP client (and so its credentials and
	// connection pool). Its own retries are off: every call goes through
	// c.runner like the rest of gcsput's requests.
	c.gcs, err = storage.NewClient(ctx, option.WithHTTPClient(c.http),
		option.WithEndpoint(c.endpoint+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		return nil, fmt.Errorf("upload: storage client: %w", err)
	}
	c.gcs.SetRetry(storage.WithPolicy(storage.RetryNever))
	// The JSON API's own client, for the one patch the storage client cannot
	// express (a metadata key deleted while others stay).
	c.raw, err = raw.NewService(ctx, option.WithHTTPClient(c.http), option.WithEndpoint(c.endpoint+"/storage/v1/"))
	if err != nil {
		return nil, fmt.Errorf("upload: JSON API client: %w", err)
	}
	if opts.Manifest != "" {
		if c.manifest, err = manifest.Open(opts.Manifest); err != nil {
			c.gcs.Close()
			return nil, fmt.Errorf("upload: %w", err)
		}
	}
	return c, nil
}

// withTokens returns a client like hc whose requests carry their context's
// idempotency token (retry.TokenTransport), refused once l is closed. hc
// itself is not changed.
// Its JSON answers are capped and its listings watched (boundedJSON).
// Requests to a bucket are held to its window (capacityTransport), when
// wrap is not nil.
func withTokens(hc *http.Client, l *life, endpoint string, wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	var inner http.RoundTripper = &retry.TokenTransport{Base: hc.Transport}
	if wrap != nil {
		inner = wrap(inner)
	}
	base := boundedJSON{base: inner, prefix: endpointPath(endpoint)}
	return &http.Client{Transport: closedGate{base: base, life: l}, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar, Timeout: hc.Timeout}
}

// warn passes a warning to Options.Warn.
func (c *Client) warn(msg string) {
	if c.opts.Warn != nil {
		c.opts.Warn(msg)
	}
}

// resumable returns a resumable client for one transfer, whose events go to
// onEvent (then to Options.OnEvent).
func (c *Client) resumable(onEvent func(resumable.Event)) (*resumable.Client, error) {
	return resumable.New(resumable.Options{
		HTTPClient: c.http, Endpoint: c.endpoint, ChunkSize: c.opts.ChunkSize,
		Retry: c.runner, StallTimeout: c.opts.StallTimeout, OnEvent: onEvent,
		UserAgent: "gcsput", UserProject: c.opts.UserProject,
	})
}

// Stat returns the object's metadata; storage.ErrObjectNotExist when there
// is none. It reads the live generation; StatGeneration reads the one
// named, noncurrent too.
func (c *Client) Stat(ctx context.Context, u URL) (*storage.ObjectAttrs, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	var attrs *storage.ObjectAttrs
	err = c.runner.Do(ctx, func(ctx context.Context) error {
		var err error
		attrs, err = c.object(u).Attrs(ctx)
		return permanentIfMissing(err)
	})
	if err == nil && attrs.CustomerKeySHA256 != "" {
		return c.keyedAttrs(ctx, attrs)
	}
	return attrs, c.noteBilling(err)
}

// statGeneration returns the metadata of generation gen of the object u.
func (c *Client) statGeneration(ctx context.Context, u URL, gen int64) (*storage.ObjectAttrs, error) {
	var attrs *storage.ObjectAttrs
	err := c.runner.Do(ctx, func(ctx context.Context) error {
		var err error
		attrs, err = c.object(u).Generation(gen).Attrs(ctx)
		return permanentIfMissing(err)
	})
	if err == nil && attrs.CustomerKeySHA256 != "" {
		return c.keyedAttrs(ctx, attrs)
	}
	return attrs, err
}

// Update patches the object's metadata (content type, cache control, custom
// metadata: see storage.ObjectAttrsToUpdate; a custom key set to "" is
// deleted, a standard field set to "" is cleared) and returns the new
// metadata.
//
// A patch is not idempotent, so, following GCS's retry strategy, it is made
// conditionally idempotent: it carries ifMetagenerationMatch with the
// metageneration just read, and only then is it retried. A retry that meets
// 412 after an attempt whose reply was lost checks whether that attempt
// applied the patch, and if so has succeeded.
//
// up may also set or release holds (TemporaryHold, EventBasedHold) and set,
// extend or (with o.OverrideUnlockedRetention) shorten or remove the
// object's retention (an empty storage.ObjectRetention removes it).
func (c *Client) Update(ctx context.Context, u URL, up storage.ObjectAttrsToUpdate, uo UpdateOptions) (*storage.ObjectAttrs, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	before, err := c.Stat(ctx, u)
	if err != nil {
		return nil, err
	}
	o := c.object(u).If(storage.Conditions{MetagenerationMatch: before.Metageneration})
	if uo.OverrideUnlockedRetention {
		o = o.OverrideUnlockedRetention(true)
	}
	return c.conditional(ctx, u, func(ctx context.Context) (*storage.ObjectAttrs, error) {
		if deletesKeys(up) {
			if err := c.patchWithNulls(ctx, u, before.Metageneration, up, uo); err != nil {
				return nil, err
			}
			return c.object(u).Attrs(ctx)
		}
		return o.Update(ctx, up)
	}, func(now *storage.ObjectAttrs) bool {
		return now.Metageneration == before.Metageneration+1 && applied(now, up)
	})
}

// conditional runs write, which carries a precondition, under the
// Client's retry policy. A retry whose earlier attempt did the write but
// lost its answer meets 412: then u is read back, and made says whether
// what it holds now is that attempt's doing.
func (c *Client) conditional(ctx context.Context, u URL, write func(context.Context) (*storage.ObjectAttrs, error), made func(now *storage.ObjectAttrs) bool) (*storage.ObjectAttrs, error) {
	var attrs *storage.ObjectAttrs
	tries := 0
	err := c.runner.Do(ctx, func(ctx context.Context) error {
		tries++
		var err error
		attrs, err = write(ctx)
		if tries > 1 && isStatus(err, http.StatusPreconditionFailed) {
			if now, serr := c.Stat(ctx, u); serr == nil && made(now) {
				attrs, err = now, nil // the attempt whose reply was lost did it
			}
		}
		return permanentIfMissing(err)
	})
	return attrs, err
}

// deletesKeys reports whether up deletes a custom metadata key (a "" value),
// which storage.ObjectAttrsToUpdate sends as an empty string instead.
func deletesKeys(up storage.ObjectAttrsToUpdate) bool {
	for _, v := range up.Metadata {
		if v == "" {
			return true
		}
	}
	return false
}

// patchWithNulls sends up as a JSON API patch in which deleted keys are null,
// under ifMetagenerationMatch. It covers the standard fields, metadata,
// holds and retention; up's other fields (ACL, custom time) are not sent.
func (c *Client) patchWithNulls(ctx context.Context, u URL, metageneration int64, up storage.ObjectAttrsToUpdate, uo UpdateOptions) error {
	o := &raw.Object{Metadata: map[string]string{}, ForceSendFields: []string{"Metadata"}}
	for k, v := range up.Metadata {
		if v == "" {
			o.NullFields = append(o.NullFields, "Metadata."+k)
		} else {
			o.Metadata[k] = v
		}
	}
	for _, f := range []struct {
		v    any
		dst  *string
		name string
	}{
		{up.ContentType, &o.ContentType, "ContentType"}, {up.CacheControl, &o.CacheControl, "CacheControl"},
		{up.ContentDisposition, &o.ContentDisposition, "ContentDisposition"},
		{up.ContentEncoding, &o.ContentEncoding, "ContentEncoding"}, {up.ContentLanguage, &o.ContentLanguage, "ContentLanguage"},
	} {
		switch s, _ := f.v.(string); {
		case f.v == nil:
		case s == "":
			o.NullFields = append(o.NullFields, f.name)
		default:
			*f.dst = s
		}
	}
	patchHolds(o, up)
	call := c.raw.Objects.Patch(u.Bucket, u.Object, o).IfMetagenerationMatch(metageneration)
	if uo.OverrideUnlockedRetention {
		call = call.OverrideUnlockedRetention(true)
	}
	if c.opts.UserProject != "" {
		call = call.UserProject(c.opts.UserProject)
	}
	_, err := call.Context(ctx).Do()
	return err
}

// applied reports whether attrs show every change up asks for.
func applied(attrs *storage.ObjectAttrs, up storage.ObjectAttrsToUpdate) bool {
	same := func(v any, want string) bool {
		s, _ := v.(string)
		return v == nil || s == want
	}
	if !same(up.ContentType, attrs.ContentType) || !same(up.CacheControl, attrs.CacheControl) ||
		!same(up.ContentDisposition, attrs.ContentDisposition) || !same(up.ContentEncoding, attrs.ContentEncoding) ||
		!same(up.ContentLanguage, attrs.ContentLanguage) {
		return false
	}
	for k, v := range up.Metadata {
		if got, ok := attrs.Metadata[k]; v != "" && got != v || v == "" && ok {
			return false
		}
	}
	return true
}

// DeleteOptions are the options of [Client.Delete]. The zero value
// deletes the live generation.
type DeleteOptions struct {
	// Generation, when not 0, deletes that generation of the object, live
	// or noncurrent (the official client's obj.Generation(g).Delete): a
	// live object that has replaced it is left alone. 0 (the default)
	// deletes the live generation.
	Generation int64

	// IfGenerationMatch, when not nil, deletes the live generation only
	// while it is *IfGenerationMatch (ifGenerationMatch; a 412
	// *googleapi.Error otherwise), as in [UploadOptions]: a generation
	// that has replaced the one read is never deleted. It takes no
	// Generation (that one is deleted whatever is live), and a pointer to
	// 0 (only if absent) can delete nothing: both are ErrBadOption errors.
	// nil (the default): the live generation is read first and made the
	// condition.
	IfGenerationMatch *int64
}

// Delete deletes one generation of the object: the live one, or
// o.Generation. Every delete it sends names a generation or a generation
// precondition, which makes it safe to retry: a retry that meets 404 after
// an attempt whose reply was lost has succeeded. With neither option set
// it reads the live generation first and deletes under ifGenerationMatch. A missing
// object (or generation) is storage.ErrObjectNotExist.
func (c *Client) Delete(ctx context.Context, u URL, o DeleteOptions) error {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	h := c.object(u)
	switch {
	case o.IfGenerationMatch != nil && *o.IfGenerationMatch == 0:
		return fmt.Errorf("upload: delete %s: %w: DeleteOptions.IfGenerationMatch 0 (only if absent) can delete nothing: give the live generation, or nil", u, ErrBadOption)
	case o.IfGenerationMatch != nil && o.Generation != 0:
		return fmt.Errorf("upload: delete %s: %w: DeleteOptions takes a Generation (to delete) or an IfGenerationMatch (of the live one), not both", u, ErrBadOption)
	case o.Generation < 0 || o.IfGenerationMatch != nil && *o.IfGenerationMatch < 0:
		return fmt.Errorf("upload: delete %s: %w: a generation is a positive number (DeleteOptions)", u, ErrBadOption)
	case o.IfGenerationMatch != nil:
		h = h.If(storage.Conditions{GenerationMatch: *o.IfGenerationMatch})
	case o.Generation == 0:
		attrs, err := c.Stat(ctx, u)
		if err != nil {
			return err
		}
		h = h.If(storage.Conditions{GenerationMatch: attrs.Generation})
	}
	if o.Generation != 0 {
		h = h.Generation(o.Generation)
	}
	return c.deleteRetried(ctx, h)
}

// deleteRetried deletes o, a handle made safe to retry (a generation or a
// generation precondition), under the retry policy: a retry that meets 404
// has succeeded, since an earlier attempt deleted it and its reply was lost.
func (c *Client) deleteRetried(ctx context.Context, o *storage.ObjectHandle) error {
	tries := 0
	return c.runner.Do(ctx, func(ctx context.Context) error {
		tries++
		err := o.Delete(ctx)
		if tries > 1 && errors.Is(err, storage.ErrObjectNotExist) {
			return nil
		}
		return retainedError(permanentIfMissing(err))
	})
}

// isStatus reports whether err is a googleapi error with the given code.
func isStatus(err error, code int) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == code
}

// Compose concatenates srcs (at most 32, in the same bucket as dst) into dst
// and returns dst's metadata.
func (c *Client) Compose(ctx context.Context, dst URL, srcs ...URL) (*storage.ObjectAttrs, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	b := c.bucket(dst.Bucket)
	handles := make([]*storage.ObjectHandle, len(srcs))
	for i, s := range srcs {
		if s.Bucket != dst.Bucket {
			return nil, fmt.Errorf("upload: compose: %s is not in bucket %s", s, dst.Bucket)
		}
		handles[i] = b.Object(s.Object)
	}
	// Compose is made conditionally idempotent like Update: the destination's
	// generation (0: it must not exist) is a precondition, and a retry that meets
	// 412 checks whether its lost attempt made the composite.
	cond, err := c.liveCond(ctx, dst)
	if err != nil {
		return nil, err
	}
	return c.conditional(ctx, dst, func(ctx context.Context) (*storage.ObjectAttrs, error) {
		return b.Object(dst.Object).If(cond).Key(c.keys(ctx).Key).ComposerFrom(handles...).Run(ctx)
	}, func(now *storage.ObjectAttrs) bool {
		return now.ComponentCount > 0 && (cond.DoesNotExist || now.Generation != cond.GenerationMatch)
	})
}

// List yields the objects whose names start with prefix, in name order. With
// delimiter "/" it yields the objects directly under prefix and, for each
// deeper "folder", one ObjectAttrs with only Prefix set. Each page request is
// retried under the Client's policy; the iteration stops at the first error.
// In a bucket with hierarchical namespace it does not list an empty folder;
// ListLevel does.
func (c *Client) List(ctx context.Context, bucket, prefix, delimiter string) iter.Seq2[*storage.ObjectAttrs, error] {
	return c.list(ctx, &storage.Query{Prefix: prefix, Delimiter: delimiter}, bucket)
}

// ListLevel is List with delimiter "/" that also asks for folders as
// prefixes (the JSON API's includeFoldersAsPrefixes): in a bucket with
// hierarchical namespace an empty folder is then listed, as a Prefix,
// like a folder that holds objects. In a flat bucket it is List.
func (c *Client) ListLevel(ctx context.Context, bucket, prefix string) iter.Seq2[*storage.ObjectAttrs, error] {
	return c.list(ctx, &storage.Query{Prefix: prefix, Delimiter: "/", IncludeFoldersAsPrefixes: true}, bucket)
}

// Versions is List with every generation, live and noncurrent, each with
// its Generation (the official client's Query.Versions), in name and then
// generation order (oldest first). delimiter is as List has it.
func (c *Client) Versions(ctx context.Context, bucket, prefix, delimiter string) iter.Seq2[*storage.ObjectAttrs, error] {
	return c.list(ctx, &storage.Query{Prefix: prefix, Delimiter: delimiter, Versions: true}, bucket)
}

func (c *Client) list(ctx context.Context, q *storage.Query, bucket string) iter.Seq2[*storage.ObjectAttrs, error] {
	return func(yield func(*storage.ObjectAttrs, error) bool) {
		ctx, leave, err := c.enter(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		defer leave()
		token := ""
		given := map[string]bool{} // the page tokens of the pages listed: one given again would list them again
		for {
			var page []*storage.ObjectAttrs
			var next string
			err := c.runner.Do(ctx, func(ctx context.Context) error {
				page = page[:0]
				var err error
				it := c.bucket(bucket).Objects(withPageGuard(ctx), q)
				next, err = iterator.NewPager(it, listPageSize, token).NextPage(&page)
				var le *listError
				if errors.As(err, &le) {
					return retry.Permanent(le) // not the *url.Error around it: its URL says nothing more
				}
				return permanentIfMissing(err)
			})
			if err == nil && next != "" && (next == token || given[next]) {
				err = &listError{why: fmt.Sprintf("the server gave a page token it had given before (after %d pages of %d)", len(given)+1, listPageSize)}
			}
			if err != nil {
				yield(nil, c.noteBilling(err))
				return
			}
			given[next] = true
			for _, o := range page {
				if o.Bucket == "" {
					o.Bucket = bucket // the storage client leaves it empty on prefixes
				}
				if !yield(o, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			token = next
		}
	}
}

// permanentIfMissing marks "not found" errors as not worth retrying.
func permanentIfMissing(err error) error {
	if errors.Is(err, storage.ErrObjectNotExist) || errors.Is(err, storage.ErrBucketNotExist) {
		return retry.Permanent(err)
	}
	return err
}

// ReadRange writes bytes [off, off+n) of the object to w (n < 0: to the
// end), from the generation of the first response. A response that breaks
// is continued from the bytes already written, under the retry policy. A
// range cannot be checked against the object's CRC32C (that covers the
// whole object); use DownloadWriter for a verified read of all of it.
func (c *Client) ReadRange(ctx context.Context, u URL, off, n int64, w io.Writer) (int64, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer leave()
	var written, gen int64
	var key []byte
	if c.hasKeys(ctx) { // a CSEK object is read with its key: find it from the metadata
		attrs, err := c.Stat(ctx, u)
		if err != nil {
			return 0, err
		}
		if key, err = c.readKey(ctx, attrs); err != nil {
			return 0, err
		}
		gen = attrs.Generation
	}
	err = c.runner.Do(ctx, func(ctx context.Context) error {
		o := c.object(u).Key(key)
		if gen != 0 {
			o = o.Generation(gen)
		}
		left := int64(-1)
		if n >= 0 {
			if left = n - written; left == 0 {
				return nil
			}
		}
		r, err := o.NewRangeReader(ctx, off+written, left)
		if err != nil {
			return permanentIfMissing(err)
		}
		defer r.Close()
		gen = r.Attrs.Generation
		m, err := io.Copy(permanentWriter{w}, r)
		written += m
		return err
	})
	return written, err
}

// permanentWriter marks the destination's own errors (a closed pipe) as not
// worth a retry: only the network's are.
type permanentWriter struct{ w io.Writer }

func (p permanentWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	return n, retry.Permanent(err)
}

// liveCond is the precondition that makes a write over u conditionally
// idempotent: u's live generation, or that u does not exist.
func (c *Client) liveCond(ctx context.Context, u URL) (storage.Conditions, error) {
	before, err := c.Stat(ctx, u)
	switch {
	case err == nil:
		return storage.Conditions{GenerationMatch: before.Generation}, nil
	case errors.Is(err, storage.ErrObjectNotExist):
		return storage.Conditions{DoesNotExist: true}, nil
	}
	return storage.Conditions{}, err
}
