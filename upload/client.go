package upload

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/retry"
)

// Client uploads and downloads with resumable, verified transfers. It is safe
// for concurrent use. Close it when done.
type Client struct {
	opts     Options
	http     *http.Client
	endpoint string
	gcs      *storage.Client
	store    *Store // nil with NoState
	runner   *retry.Runner
}

// New checks opts, finds credentials (unless opts.HTTPClient is given) and
// returns a Client. Bad options (e.g. a chunk size that is not a multiple of
// 256 KiB) are errors matching ErrBadOption; no request is made.
func New(ctx context.Context, opts Options) (*Client, error) {
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
	if err != nil {
		return nil, err
	}
	c := &Client{opts: opts, http: metered(ac.HTTPClient), endpoint: ac.Endpoint, runner: opts.Retry}
	if c.runner == nil {
		c.runner = &retry.Runner{}
	}
	for _, w := range append(warnings, ac.Warnings...) {
		c.warn(w)
	}
	if !opts.NoState {
		if c.store, err = OpenStore(opts.StateDir); err != nil {
			return nil, err
		}
		c.store.Now, c.store.Warn = opts.Now, opts.Warn
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
	return c, nil
}

// warn passes a warning to Options.Warn.
func (c *Client) warn(msg string) {
	if c.opts.Warn != nil {
		c.opts.Warn(msg)
	}
}

// trusted reports whether rec's session may be contacted: it must live on
// the endpoint in use. Another is ignored, with a warning, and never sent
// a byte or a token.
func (c *Client) trusted(rec *Record) bool {
	if rec.Upload == nil || rec.Upload.Session == nil {
		return true
	}
	if err := sessionOrigin(rec.Upload.Session.URI, c.endpoint); err != nil {
		c.store.ignore(rec.Key(), c.store.path(rec.Key()), err.Error())
		return false
	}
	return true
}

// Close releases the storage client's resources.
func (c *Client) Close() error { return c.gcs.Close() }

// Storage returns the cloud.google.com/go/storage client the Client uses for
// metadata calls, for anything this package does not cover. It shares the
// Client's credentials; its own retries are disabled.
func (c *Client) Storage() *storage.Client { return c.gcs }

// Endpoint returns the base URL requests go to.
func (c *Client) Endpoint() string { return c.endpoint }

// Store returns the state directory's store, or nil with NoState.
func (c *Client) Store() *Store { return c.store }

// resumable returns a resumable client for one transfer, whose events go to
// onEvent (then to Options.OnEvent).
func (c *Client) resumable(onEvent func(resumable.Event)) (*resumable.Client, error) {
	return resumable.New(resumable.Options{
		HTTPClient: c.http, Endpoint: c.endpoint, ChunkSize: c.opts.ChunkSize,
		Retry: c.runner, StallTimeout: c.opts.StallTimeout, OnEvent: onEvent,
		UserAgent: "gcsput",
	})
}

// Stat returns the object's metadata; storage.ErrObjectNotExist when there
// is none.
func (c *Client) Stat(ctx context.Context, u URL) (*storage.ObjectAttrs, error) {
	var attrs *storage.ObjectAttrs
	err := c.runner.Do(ctx, func(ctx context.Context) error {
		var err error
		attrs, err = c.gcs.Bucket(u.Bucket).Object(u.Object).Attrs(ctx)
		return permanentIfMissing(err)
	})
	return attrs, err
}

// Update patches the object's metadata (content type, cache control, custom
// metadata: see storage.ObjectAttrsToUpdate; a custom key set to "" is
// deleted) and returns the new metadata.
func (c *Client) Update(ctx context.Context, u URL, up storage.ObjectAttrsToUpdate) (*storage.ObjectAttrs, error) {
	var attrs *storage.ObjectAttrs
	err := c.runner.Do(ctx, func(ctx context.Context) error {
		var err error
		attrs, err = c.gcs.Bucket(u.Bucket).Object(u.Object).Update(ctx, up)
		return permanentIfMissing(err)
	})
	return attrs, err
}

// Delete deletes the object.
func (c *Client) Delete(ctx context.Context, u URL) error {
	return c.runner.Do(ctx, func(ctx context.Context) error {
		return permanentIfMissing(c.gcs.Bucket(u.Bucket).Object(u.Object).Delete(ctx))
	})
}

// Compose concatenates srcs (at most 32, in the same bucket as dst) into dst
// and returns dst's metadata.
func (c *Client) Compose(ctx context.Context, dst URL, srcs ...URL) (*storage.ObjectAttrs, error) {
	b := c.gcs.Bucket(dst.Bucket)
	handles := make([]*storage.ObjectHandle, len(srcs))
	for i, s := range srcs {
		if s.Bucket != dst.Bucket {
			return nil, fmt.Errorf("upload: compose: %s is not in bucket %s", s, dst.Bucket)
		}
		handles[i] = b.Object(s.Object)
	}
	var attrs *storage.ObjectAttrs
	err := c.runner.Do(ctx, func(ctx context.Context) error {
		var err error
		attrs, err = b.Object(dst.Object).ComposerFrom(handles...).Run(ctx)
		return permanentIfMissing(err)
	})
	return attrs, err
}

// List yields the objects whose names start with prefix, in name order. With
// delimiter "/" it yields the objects directly under prefix and, for each
// deeper "folder", one ObjectAttrs with only Prefix set. Each page request is
// retried under the Client's policy; the iteration stops at the first error.
func (c *Client) List(ctx context.Context, bucket, prefix, delimiter string) iter.Seq2[*storage.ObjectAttrs, error] {
	return func(yield func(*storage.ObjectAttrs, error) bool) {
		q := &storage.Query{Prefix: prefix, Delimiter: delimiter}
		token := ""
		for {
			var page []*storage.ObjectAttrs
			var next string
			err := c.runner.Do(ctx, func(ctx context.Context) error {
				page = page[:0]
				var err error
				it := c.gcs.Bucket(bucket).Objects(ctx, q)
				next, err = iterator.NewPager(it, 1000, token).NextPage(&page)
				return permanentIfMissing(err)
			})
			if err != nil {
				yield(nil, err)
				return
			}
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
