package upload

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/objerr"
)

// ErrFolderName is matched (errors.Is) by the error of [Client.Remove], without
// Recursive, for a name that is no object but a folder: objects exist under
// name/. Nothing was removed; Recursive removes what is under it.
var ErrFolderName = errors.New("no such object, but objects exist under its name as a folder")

// RemoveOptions are the choices of [Client.Remove]. The zero value removes
// the live generation of each object named, under the generation just read
// (a retry after a lost reply cannot remove a newer object).
type RemoveOptions struct {
	// Recursive removes everything under each URL, a bucket or a prefix
	// (gs://b/logs means logs/), and in a bucket with hierarchical namespace
	// its folders too, after the objects, deepest first, and only when every
	// object went. Every listing is read before the first delete: one that
	// fails, or finds nothing, removes nothing at all. Each object is removed
	// under the generation listed, with no second read.
	Recursive bool
	// Wildcards expands the wildcards of each URL's name ("*", "**", "?",
	// "[...]", see [Client.Glob]) as gcsput rm does: without Recursive to
	// the objects they match; with Recursive also to the folders they
	// match, taken whole. Every pattern is expanded before anything is
	// removed, so one that matches nothing (an error matching ErrNoMatch)
	// removes nothing. Without it (the default) a name is taken as it is:
	// GCS names may hold those characters, and "a*" removes the object
	// named a*, not every object whose name starts with a.
	Wildcards bool
	// DryRun removes nothing: each object is still read (or listed), and
	// Removed hears of each that would be removed.
	DryRun bool
	// AllVersions removes every generation of each name, noncurrent ones too,
	// each by number (idempotent), oldest first.
	AllVersions bool
	// IfGenerationMatch, when not nil, removes the object only while its
	// live generation is *IfGenerationMatch (a 412 otherwise), as in
	// [DeleteOptions]; nil (the default) means no condition. It takes
	// exactly one URL, without Recursive or AllVersions, and a pointer to 0
	// (only if absent) would remove nothing (else ErrBadOption, and nothing
	// is removed).
	IfGenerationMatch *int64
	// Removed hears, in order and from the calling goroutine, of each object,
	// generation or folder removed (or, with DryRun, that would be), and of
	// each that could not be (Err set); nil hears nothing.
	Removed func(Removal)
	// Warn gets a line when a bucket's namespace cannot be read: it is
	// treated as flat, its objects are removed and its folders, if any, are
	// left. nil drops it.
	Warn func(string)

	// matched are the objects Wildcards expanded to under Recursive, as
	// listed (with their generations): removed with the rest, each under
	// the generation listed.
	matched []*storage.ObjectAttrs
}

// Removal is one object, generation or folder that [Client.Remove] removed,
// would remove (DryRun), or could not remove (Err).
type Removal struct {
	URL URL
	// Generation is the generation removed under AllVersions; 0 otherwise.
	Generation int64
	// Folder says URL is a folder of a bucket with hierarchical namespace.
	Folder bool
	// Err is why URL could not be removed: its text names URL. The others
	// are still removed.
	Err error
}

// RemoveError is the error of a [Client.Remove] that went through and
// could not remove some objects (or, at its end, folders); each was told to
// RemoveOptions.Removed with its error.
type RemoveError struct {
	Failed, Total int
	// Folders says the failures are of folders, after every object went.
	Folders bool
}

func (e *RemoveError) Error() string {
	noun := "objects"
	if e.Folders {
		noun = "folders"
	}
	return fmt.Sprintf("%d of %d %s failed", e.Failed, e.Total, noun)
}

// Remove removes the objects urls name (each an object; with Recursive,
// everything under each) as [RemoveOptions] says; with Wildcards, a URL may
// hold wildcards, expanded before anything is removed. An error that is not
// a *RemoveError (a pattern or a listing that failed, a cancelled context)
// ended it.
func (c *Client) Remove(ctx context.Context, urls []URL, o RemoveOptions) error {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if o.IfGenerationMatch != nil && o.Wildcards && len(urls) == 1 && HasWildcard(urls[0].Object) {
		return fmt.Errorf("remove: %w: IfGenerationMatch takes one object, not a wildcard (%s): remove each match by its own generation, or leave Wildcards off to name an object called so", ErrBadOption, urls[0])
	}
	if o.IfGenerationMatch != nil && (o.Recursive || o.AllVersions || len(urls) != 1) {
		// The condition is one object's: dropping it would remove
		// unconditionally what the caller meant to guard.
		return fmt.Errorf("remove: %w: IfGenerationMatch takes exactly one object, without Recursive or AllVersions (%d given)", ErrBadOption, len(urls))
	}
	if o.IfGenerationMatch != nil && *o.IfGenerationMatch <= 0 {
		return fmt.Errorf("remove: %w: IfGenerationMatch %d would remove nothing (0 means only if absent): give the live generation", ErrBadOption, *o.IfGenerationMatch)
	}
	if o.Wildcards {
		var matched []*storage.ObjectAttrs
		if urls, matched, err = c.expandRemove(ctx, urls, o.Recursive); err != nil {
			return err
		}
		o.matched = matched
	}
	r := remover{c: c, o: o}
	if o.Recursive {
		return r.under(ctx, urls)
	}
	return r.each(ctx, urls, r.one)
}

// expandRemove expands the wildcards among Remove's URLs (Wildcards): a match is an
// object (a URL, or with recursive an object as listed, with its
// generation) or, with recursive, a folder, taken whole as a prefix. URLs
// without wildcards stay as given.
func (c *Client) expandRemove(ctx context.Context, urls []URL, recursive bool) (out []URL, matched []*storage.ObjectAttrs, err error) {
	for _, u := range urls {
		if !HasWildcard(u.Object) {
			out = append(out, u)
			continue
		}
		matches, err := c.globMatches(ctx, u, recursive)
		if err != nil {
			return nil, nil, err
		}
		for _, a := range matches {
			switch {
			case a.Prefix != "":
				out = append(out, URL{Bucket: u.Bucket, Object: a.Prefix})
			case recursive:
				matched = append(matched, a)
			default:
				out = append(out, URL{Bucket: u.Bucket, Object: a.Name})
			}
		}
	}
	return out, matched, nil
}

// remover is one Remove.
type remover struct {
	c *Client
	o RemoveOptions
}

func (r *remover) tell(rm Removal) {
	if r.o.Removed != nil {
		r.o.Removed(rm)
	}
}

// each runs fn for every object, telling each failure and going on; a
// cancelled context ends it.
func (r *remover) each(ctx context.Context, urls []URL, fn func(context.Context, URL) error) error {
	failed := 0
	for _, u := range urls {
		if err := fn(ctx, u); err != nil {
			if errors.Is(err, context.Canceled) {
				return err
			}
			r.tell(Removal{URL: u, Err: err})
			failed++
		}
	}
	if failed > 0 {
		return &RemoveError{Failed: failed, Total: len(urls)}
	}
	return nil
}

// one removes the object u names (without Recursive).
func (r *remover) one(ctx context.Context, u URL) error {
	if r.o.AllVersions {
		return r.versions(ctx, u)
	}
	var err error
	switch {
	case r.o.DryRun:
		_, err = r.c.Stat(ctx, u)
	case r.o.IfGenerationMatch != nil:
		err = r.c.Delete(ctx, u, DeleteOptions{IfGenerationMatch: r.o.IfGenerationMatch})
	default:
		err = r.c.Delete(ctx, u, DeleteOptions{})
	}
	if errors.Is(err, storage.ErrObjectNotExist) && r.holdsObjects(ctx, u) {
		return objerr.New(u.Bucket, u.Object, ErrFolderName)
	}
	if err != nil {
		return objerr.New(u.Bucket, u.Object, err)
	}
	r.tell(Removal{URL: u})
	return nil
}

// holdsObjects reports whether any object is named under u as a folder
// (u/...): a remove without Recursive of such a name meant the folder. One
// listing request; a listing that fails says no, and "no such object"
// stands.
func (r *remover) holdsObjects(ctx context.Context, u URL) bool {
	for _, err := range r.c.List(ctx, u.Bucket, u.Object+"/", "/") {
		return err == nil
	}
	return false
}

// versions removes every generation of the object u names; the listing is
// read first, and each generation is removed by number (idempotent).
func (r *remover) versions(ctx context.Context, u URL) error {
	var gens []int64
	for o, err := range r.c.Versions(ctx, u.Bucket, u.Object, "") {
		if err != nil {
			return fmt.Errorf("%s: listing its generations (none was deleted): %w", u, err)
		}
		if o.Name == u.Object {
			gens = append(gens, o.Generation)
		}
	}
	if len(gens) == 0 {
		return objerr.New(u.Bucket, u.Object, storage.ErrObjectNotExist)
	}
	for _, g := range gens {
		if !r.o.DryRun {
			if err := r.c.Delete(ctx, u, DeleteOptions{Generation: g}); err != nil {
				return objerr.New(u.Bucket, u.Object, err)
			}
		}
		r.tell(Removal{URL: u, Generation: g})
	}
	return nil
}

// under removes everything under each prefix, and the objects matched:
// every listing is read first, so a listing that fails removes nothing.
func (r *remover) under(ctx context.Context, urls []URL) error {
	var all, folders []URL
	listed := map[URL]int64{} // the generation each object was listed with
	for _, o := range r.o.matched {
		ou := URL{Bucket: o.Bucket, Object: o.Name}
		all = append(all, ou)
		listed[ou] = o.Generation
	}
	for _, u := range urls {
		prefix := u.Object
		if prefix != "" && prefix[len(prefix)-1] != '/' {
			prefix += "/" // gs://b/logs means the folder logs/
		}
		n := len(all)
		for o, err := range r.c.List(ctx, u.Bucket, prefix, "") {
			if err != nil {
				return fmt.Errorf("listing gs://%s/%s (nothing under it was deleted): %w", u.Bucket, prefix, err)
			}
			ou := URL{Bucket: o.Bucket, Object: o.Name}
			all = append(all, ou)
			listed[ou] = o.Generation
		}
		fs, err := r.hnsFolders(ctx, u.Bucket, prefix)
		if err != nil {
			return fmt.Errorf("listing the folders of gs://%s/%s (nothing under it was deleted): %w", u.Bucket, prefix, err)
		}
		if len(all) == n && len(fs) == 0 {
			return fmt.Errorf("gs://%s/%s: no objects to remove", u.Bucket, prefix)
		}
		folders = append(folders, fs...)
	}
	err := r.each(ctx, all, func(ctx context.Context, u URL) error {
		switch {
		case r.o.AllVersions:
			return r.versions(ctx, u)
		case r.o.DryRun:
		default:
			if err := r.c.Delete(ctx, u, DeleteOptions{IfGenerationMatch: new(listed[u])}); err != nil {
				return objerr.New(u.Bucket, u.Object, err)
			}
		}
		r.tell(Removal{URL: u})
		return nil
	})
	// A folder is removed only when empty: only if every object went.
	if err != nil || len(folders) == 0 {
		return err
	}
	return r.folders(ctx, folders)
}

// hnsFolders returns the folders under prefix (prefix itself included) of a
// bucket with hierarchical namespace, deepest first, the order in which they
// can be removed; nil for a flat bucket, or one whose namespace cannot be
// read (with a warning).
func (r *remover) hnsFolders(ctx context.Context, bucket, prefix string) ([]URL, error) {
	hns, err := r.c.HierarchicalNamespace(ctx, bucket)
	if err != nil {
		if r.o.Warn != nil {
			r.o.Warn(fmt.Sprintf("cannot tell whether gs://%s has folders (%s); its folders, if any, are left", bucket, err))
		}
		return nil, nil
	}
	if !hns {
		return nil, nil
	}
	var out []URL
	for f, err := range r.c.Folders(ctx, bucket, prefix, true) {
		if err != nil {
			return nil, err
		}
		out = append(out, URL{Bucket: bucket, Object: f.Name})
	}
	// A folder sorts before the folders under it (its name is their
	// prefix): reversed name order is deepest first.
	slices.SortFunc(out, func(x, y URL) int {
		switch {
		case x.Object > y.Object:
			return -1
		case x.Object < y.Object:
			return 1
		}
		return 0
	})
	return out, nil
}

// folders removes folders, deepest first, or with DryRun tells them.
func (r *remover) folders(ctx context.Context, folders []URL) error {
	failed := 0
	for _, f := range folders {
		var err error
		if !r.o.DryRun {
			err = r.c.DeleteFolder(ctx, f)
		}
		if err != nil {
			failed++
		}
		r.tell(Removal{URL: f, Folder: true, Err: err})
	}
	if failed > 0 {
		return &RemoveError{Failed: failed, Total: len(folders), Folders: true}
	}
	return nil
}
