package upload

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// maxDeletes is how many component deletions run at once.
const maxDeletes = 8

// objectGen is one generation of an object of a bucket.
type objectGen struct {
	name string
	gen  int64
}

// deleteComponents deletes the uploaded components of a composite upload
// in bucket, each by its generation; one already gone (404) counts as
// deleted.
func (c *Client) deleteComponents(ctx context.Context, bucket string, comps []state.Component) error {
	var objs []objectGen
	for _, comp := range comps {
		if comp.Done() {
			objs = append(objs, objectGen{comp.Name, comp.Generation})
		}
	}
	_, err := c.deleteObjects(ctx, bucket, objs)
	return err
}

// sourcesLeft reports whether the components of a compose made with
// deleteSourceObjects are still there: one of them is read (a GET per
// composite upload). A server that ignores the field (an emulator that
// predates it) is remembered, for composes' decisions (composite_auto.go);
// an answer that is not a 404 counts as there, so that the deletes run.
// Google's own endpoint is not asked: GCS documents the field and honours
// it, and the GET was a round trip after the compose, before the upload
// could return.
func (c *Client) sourcesLeft(ctx context.Context, bucket string, comps []state.Component) bool {
	if googleEndpoint(c.endpoint) {
		return false
	}
	for _, comp := range comps {
		if !comp.Done() {
			continue
		}
		_, err := c.statGeneration(ctx, URL{Bucket: bucket, Object: comp.Name}, comp.Generation)
		if errors.Is(err, storage.ErrObjectNotExist) {
			return false
		}
		if err == nil {
			c.keepsSources.Store(true)
		}
		return true
	}
	return false
}

// googleEndpoint reports whether endpoint is GCS's own: https to
// storage.googleapis.com or another host under googleapis.com (a regional
// or Private Service Connect endpoint), not an emulator.
func googleEndpoint(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "https" {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return strings.HasSuffix(h, ".googleapis.com")
}

// deleteObjects deletes objs from bucket, maxDeletes at a time, each by its
// generation (so a retry, or another process, never deletes a newer one),
// and returns those deleted or found gone, in name order, and the others'
// errors, joined.
func (c *Client) deleteObjects(ctx context.Context, bucket string, objs []objectGen) ([]URL, error) {
	var (
		mu   sync.Mutex
		gone []URL
		errs []error
		wg   sync.WaitGroup
	)
	work := make(chan objectGen)
	for range min(maxDeletes, len(objs)) {
		wg.Go(func() {
			for o := range work {
				u := URL{Bucket: bucket, Object: o.name}
				err := c.Delete(ctx, u, DeleteOptions{Generation: o.gen})
				mu.Lock()
				if err == nil || errors.Is(err, storage.ErrObjectNotExist) {
					gone = append(gone, u)
				} else {
					errs = append(errs, fmt.Errorf("%s: %w", u, err))
				}
				mu.Unlock()
			}
		})
	}
	for _, o := range objs {
		work <- o
	}
	close(work)
	wg.Wait()
	slices.SortFunc(gone, func(a, b URL) int { return strings.Compare(a.Object, b.Object) })
	return gone, errors.Join(errs...)
}

// dropComposite abandons the composite upload of rec: its component
// sessions in flight are cancelled (on the endpoint in use only), then
// every object under its component directory is deleted, also one that a
// killed process finished without recording it. It returns the objects
// deleted. The record is untrusted: nothing is touched unless its plan is
// the one its fingerprint and destination make (checkPlan).
func (c *Client) dropComposite(ctx context.Context, rec *state.Record) ([]URL, error) {
	dst, err := ParseURL(rec.Dest)
	if err == nil {
		err = checkPlan(rec, dst)
	}
	if err != nil {
		return nil, fmt.Errorf("not deleting the components the saved record of %s names: %v", rec.Dest, err)
	}
	var errs []error
	if err := rec.Upload.CheckOrigins(c.endpoint); err != nil {
		errs = append(errs, fmt.Errorf("its sessions were not cancelled: %v", err))
	} else if err := c.cancelComponents(ctx, dst, rec.Upload.Components); err != nil {
		errs = append(errs, err)
	}
	dir := componentDirOf(rec.Upload.Components[0].Name)
	var objs []objectGen
	for o, err := range c.List(ctx, dst.Bucket, dir, "") {
		if err != nil {
			return nil, errors.Join(append(errs, err)...)
		}
		if isComponentName(o.Name) && strings.HasPrefix(o.Name, dir) {
			objs = append(objs, objectGen{o.Name, o.Generation})
		}
	}
	gone, err := c.deleteObjects(ctx, dst.Bucket, objs)
	return gone, errors.Join(append(errs, err)...)
}

// componentDirOf is the directory of a component's name, ending in "/".
func componentDirOf(name string) string {
	return name[:strings.LastIndexByte(name, '/')+1]
}

// cancelComponents cancels the sessions of the components in flight; one
// the server no longer knows is as good as cancelled.
func (c *Client) cancelComponents(ctx context.Context, dst URL, comps []state.Component) error {
	rc, err := c.resumable(c.emitter(dst))
	if err != nil {
		return err
	}
	var errs []error
	for _, comp := range comps {
		if comp.Session == nil {
			continue
		}
		if err := rc.Cancel(ctx, comp.Session); err != nil && !errors.Is(err, resumable.ErrSessionExpired) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sweepComponents deletes from bucket the orphaned components of composite
// uploads whose record is gone: objects named as components are
// (gcsput-tmp/HASH/INDEX) in no directory of keep, created more than
// MaxSessionAge ago. No record can own one that old: a record is resumed
// for MaxSessionAge after it was created, before any of its components.
func (c *Client) sweepComponents(ctx context.Context, bucket string, keep map[string]bool) ([]URL, error) {
	now := c.opts.Now()
	var objs []objectGen
	for o, err := range c.List(ctx, bucket, ComponentPrefix, "") {
		if err != nil {
			return nil, err
		}
		if isComponentName(o.Name) && !keep[componentDirOf(o.Name)] && now.Sub(o.Created) > MaxSessionAge {
			objs = append(objs, objectGen{o.Name, o.Generation})
		}
	}
	return c.deleteObjects(ctx, bucket, objs)
}
