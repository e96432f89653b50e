// Package listing walks what 'gcsput ls' and 'gcsput du' show for an
// operand, by gsutil's rules for which objects a gs:// URL names, over an
// upload.Client. Each walk is a stream, page by page as the listing
// arrives: memory does not grow with the object count, and a consumer that
// stops (a closed pipe) stops the listing, with no more pages asked.
package listing

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/objerr"
	"github.com/gcsput/gcsput/upload"
)

// Options are the choices of [Objects]; the zero value lists the live
// objects one level deep.
type Options struct {
	// Recursive lists everything under a prefix; without it, a deeper folder
	// is yielded once, as an ObjectAttrs with only Prefix set.
	Recursive bool
	// Versions lists every generation, noncurrent ones too; SoftDeleted only
	// the soft-deleted ones (at most one of the two).
	Versions, SoftDeleted bool
}

// Objects yields what 'gcsput ls' lists for u, in name order:
//   - a bucket or a name ending in "/": everything under it (an error that
//     says no objects match when a folder holds none);
//   - gs://b/p: the object p, then what the folder p/ holds, never photos/
//     or pq, which a listing of the prefix "p" also holds (an error when
//     neither exists);
//   - a wildcard: the objects it matches and the folders its last segment
//     matches, once each (with Recursive, everything under them); an error
//     matching upload.ErrNoMatch when it matches nothing.
//
// Errors name the URL or prefix that failed; the walk ends at the first.
func Objects(ctx context.Context, c *upload.Client, u upload.URL, o Options) iter.Seq2[*storage.ObjectAttrs, error] {
	w := walk{c: c, o: o}
	return func(yield func(*storage.ObjectAttrs, error) bool) {
		switch {
		case upload.HasWildcard(u.Object):
			w.glob(ctx, u, yield)
		case u.Object == "" || strings.HasSuffix(u.Object, "/"):
			if n, ok := w.stream(ctx, u.Bucket, u.Object, w.delim(), yield); ok && n == 0 && u.Object != "" {
				yield(nil, fmt.Errorf("%s: no objects match", u))
			}
		default:
			w.objectOrFolder(ctx, u, yield)
		}
	}
}

// Usage yields every object 'gcsput du' counts for u: everything under the
// folder u names (gs://b/p means p/), or the objects a wildcard matches and
// everything under the folders its last segment matches. A wildcard's
// matches are all read before the first is yielded, so a glob that fails
// yields nothing.
func Usage(ctx context.Context, c *upload.Client, u upload.URL) iter.Seq2[*storage.ObjectAttrs, error] {
	return func(yield func(*storage.ObjectAttrs, error) bool) {
		parts := []*storage.ObjectAttrs{{Prefix: folderPrefix(u.Object)}}
		if upload.HasWildcard(u.Object) {
			parts = parts[:0]
			for a, err := range c.Glob(ctx, u, upload.GlobOptions{Folders: true}) {
				if err != nil {
					if !errors.Is(err, upload.ErrNoMatch) {
						err = objerr.New(u.Bucket, u.Object, err)
					}
					yield(nil, err)
					return
				}
				parts = append(parts, a)
			}
		}
		for _, p := range parts {
			if p.Name != "" {
				if !yield(p, nil) {
					return
				}
				continue
			}
			for o, err := range c.List(ctx, u.Bucket, p.Prefix, "") {
				if err != nil {
					yield(nil, fmt.Errorf("listing gs://%s/%s: %w", u.Bucket, p.Prefix, err))
					return
				}
				if !yield(o, nil) {
					return
				}
			}
		}
	}
}

// walk is one Objects.
type walk struct {
	c *upload.Client
	o Options
}

func (w walk) delim() string {
	if w.o.Recursive {
		return ""
	}
	return "/"
}

// objectOrFolder yields the object u names and then what the folder u/
// holds. The object comes first: it sorts before u/.
func (w walk) objectOrFolder(ctx context.Context, u upload.URL, yield func(*storage.ObjectAttrs, error) bool) {
	object, folder := false, false
	for a, err := range w.listing(ctx, u.Bucket, u.Object, "/") {
		if err != nil {
			yield(nil, objerr.New(u.Bucket, u.Object, err))
			return
		}
		switch {
		case a.Prefix == u.Object+"/":
			folder = true
		case a.Prefix == "" && a.Name == u.Object:
			object = true
			if !yield(a, nil) {
				return
			}
		}
	}
	switch {
	case folder:
		w.stream(ctx, u.Bucket, u.Object+"/", w.delim(), yield)
	case !object:
		yield(nil, fmt.Errorf("%s: no objects match", u))
	}
}

// glob yields what a wildcard matches: the objects, and the folders a
// one-segment pattern matches, once each (with Recursive, everything under
// them), as they come.
func (w walk) glob(ctx context.Context, u upload.URL, yield func(*storage.ObjectAttrs, error) bool) {
	for e, err := range w.c.Glob(ctx, u, upload.GlobOptions{Folders: !w.o.SoftDeleted, SoftDeleted: w.o.SoftDeleted}) {
		if err != nil {
			if !errors.Is(err, upload.ErrNoMatch) {
				err = objerr.New(u.Bucket, u.Object, err)
			}
			yield(nil, err)
			return
		}
		if e.Prefix == "" || !w.o.Recursive {
			if !yield(e, nil) {
				return
			}
			continue
		}
		if _, ok := w.stream(ctx, u.Bucket, e.Prefix, "", yield); !ok {
			return
		}
	}
}

// stream yields the listing of prefix and returns how many entries it
// yielded; ok is false when the walk is over (an error, or the consumer
// stopped).
func (w walk) stream(ctx context.Context, bucket, prefix, delim string, yield func(*storage.ObjectAttrs, error) bool) (n int, ok bool) {
	for a, err := range w.listing(ctx, bucket, prefix, delim) {
		if err != nil {
			yield(nil, objerr.New(bucket, prefix, err))
			return n, false
		}
		if !yield(a, nil) {
			return n, false
		}
		n++
	}
	return n, true
}

// listing is the listing ls shows: live objects, every generation or the
// soft-deleted ones; one level deep with empty folders too.
func (w walk) listing(ctx context.Context, bucket, prefix, delim string) iter.Seq2[*storage.ObjectAttrs, error] {
	if w.o.SoftDeleted {
		return w.c.SoftDeleted(ctx, bucket, prefix, delim)
	}
	if w.o.Versions {
		return w.c.Versions(ctx, bucket, prefix, delim)
	}
	if delim == "/" {
		return w.c.ListLevel(ctx, bucket, prefix) // empty folders too
	}
	return w.c.List(ctx, bucket, prefix, delim)
}

// folderPrefix is the prefix of the folder name names: name/ (gs://b/logs
// means logs/), the bucket's root for "".
func folderPrefix(name string) string {
	if name != "" && !strings.HasSuffix(name, "/") {
		return name + "/"
	}
	return name
}
