package upload

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/gcsput/gcsput/internal/naming"
)

// The permissions a batch asks about before it starts, with what they let it
// do in the user's words.
const (
	permCreate = "storage.objects.create"
	permDelete = "storage.objects.delete"
	permList   = "storage.objects.list"
)

var permWords = map[string]string{
	permCreate: "write objects", permDelete: "delete objects", permList: "list objects",
}

// ErrBatchStopped is matched (errors.Is) by the error of a batch that its
// first failure every file would meet stopped (a 403 or a 404 on upload,
// when the bucket could not be asked beforehand), and by the Err of each
// Result that failed alike after it (reported to Options.OnResult, and
// counted, but saying nothing the first did not). Its text names the bucket
// and the cause.
var ErrBatchStopped = errors.New("stopped by the batch's first failure")

// preflight finds, before the first transfer of a batch, what would make
// every transfer of it fail alike: a bucket that does not exist (a typo),
// credentials that lack a permission the batch needs. It is one request per
// bucket (testIamPermissions, which itself needs no permission), and its
// answer is an ErrRefused error, instead of one identical 404 or 403 per
// file.
//
// It returns the context the batch runs under. When the answer is not known
// (the request itself failed for another reason, a server without the
// method), the batch goes ahead under a context that its first 403 or 404
// ends (see batchStop, set in h); when it is known, a 403 of one file (an
// object under a hold) fails that file alone.
func (c *Client) preflight(ctx context.Context, h *callHook, bucket string, perms ...string) (context.Context, error) {
	granted, err := c.TestPermissions(ctx, bucket, perms...)
	switch {
	case errors.Is(err, storage.ErrBucketNotExist):
		return ctx, refusedf("gs://%s: bucket does not exist (check its name, or 'gcsput ls gs://%s'); nothing was transferred", bucket, bucket)
	case ctx.Err() != nil:
		return ctx, err
	case err != nil:
		if h == nil {
			return ctx, nil
		}
		ctx, cancel := context.WithCancelCause(ctx)
		h.stop = &batchStop{cancel: cancel}
		return ctx, nil // not known: the batch's first such failure will say
	}
	var lacking []string
	for _, p := range perms {
		if !slices.Contains(granted, p) {
			lacking = append(lacking, permWords[p]+" ("+p+")")
		}
	}
	if len(lacking) > 0 {
		return ctx, refusedf("gs://%s: these credentials may not %s; nothing was transferred (grant the permission, e.g. roles/storage.objectAdmin, or use --credentials with another key)",
			bucket, strings.Join(lacking, " or "))
	}
	return ctx, nil
}

// preflightAll runs preflight for each distinct bucket, in order: for
// downloads, whose failures do not stop a batch.
func (c *Client) preflightAll(ctx context.Context, buckets []string, perms ...string) error {
	var seen []string
	for _, b := range buckets {
		if slices.Contains(seen, b) {
			continue
		}
		seen = append(seen, b)
		if _, err := c.preflight(ctx, nil, b, perms...); err != nil {
			return err
		}
	}
	return nil
}

// batchStop ends an upload batch at its first failure that every other file
// of the batch would meet too, when preflight could not tell beforehand: a
// 403 (the credentials may not write there) or a 404 (an upload's 404 is a
// bucket that is not there). The transfers in flight that fail alike are
// marked (ErrBatchStopped), and nothing more is started.
type batchStop struct {
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	first  *Result // the failure that stopped the batch; nil while none has
	after  int     // failures alike after it
}

// mark wraps r.Err when r is one more failure of a stopped batch. The first
// failure of the kind stops the batch and is left as it is.
func (b *batchStop) mark(r *Result) {
	if b == nil || r.Status != StatusFailed || !naming.IsRemote(r.Dest) || !everyFileFails(r.Err) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.first == nil {
		b.first = r
		b.cancel(errStopCause)
		return
	}
	b.after++
	r.Err = &alikeError{r.Err}
}

// errStopCause is the cause of a batch's context cancelled by batchStop.
var errStopCause = errors.New("stopped by the batch's first failure")

// alikeError is a failure after the one that stopped its batch: its text is
// the failure's own; it matches ErrBatchStopped too.
type alikeError struct{ err error }

func (e *alikeError) Error() string        { return e.err.Error() }
func (e *alikeError) Unwrap() error        { return e.err }
func (e *alikeError) Is(target error) bool { return target == ErrBatchStopped }

// everyFileFails reports whether an upload's error is one every other upload
// into the bucket would meet: 403 (no permission, a bucket closed to these
// credentials) or 404 (the bucket does not exist).
func everyFileFails(err error) bool {
	var ge *googleapi.Error
	return errors.Is(err, storage.ErrBucketNotExist) ||
		errors.As(err, &ge) && (ge.Code == http.StatusForbidden || ge.Code == http.StatusNotFound)
}

// err is the error a stopped batch ends with, nil when it was not stopped.
func (b *batchStop) err() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.first == nil {
		return nil
	}
	bucket, _, _ := strings.Cut(strings.TrimPrefix(b.first.Dest, "gs://"), "/")
	msg := fmt.Sprintf("gs://%s: %s: stopped at the first such failure, which every file would meet", bucket, fatalWords(b.first.Err))
	if b.after > 0 {
		msg += fmt.Sprintf(" (%s in flight failed alike)", plural(b.after, "more transfer"))
	}
	return &stoppedError{msg + "; nothing more was started"}
}

// stoppedError is the error of a batch batchStop ended.
type stoppedError struct{ msg string }

func (e *stoppedError) Error() string        { return e.msg }
func (e *stoppedError) Is(target error) bool { return target == ErrBatchStopped }

// fatalWords says what an everyFileFails error means, in the user's words.
func fatalWords(err error) string {
	var ge *googleapi.Error
	if errors.As(err, &ge) && ge.Code == http.StatusForbidden {
		return "these credentials may not write there (403: " + ge.Message + ")"
	}
	return "bucket does not exist (404)"
}

// callHook is what one CopyAll or MoveAll call does to each of its results
// before Options.OnResult sees it: name the user's file instead of its
// compressed copy, mark the failures of a stopped batch, keep the results
// the call returns. It rides in the call's context (see tell).
type callHook struct {
	stop *batchStop
	keep bool // collect results

	mu        sync.Mutex
	originals map[string]string // compressed copy (gzip) -> the file it was made from
	results   []*Result
	fails     batchFailures // of the call's results
}

type hookKey struct{}

func withHook(ctx context.Context, h *callHook) context.Context {
	return context.WithValue(ctx, hookKey{}, h)
}

// see applies the hook to r.
func (h *callHook) see(r *Result) {
	h.mu.Lock()
	if orig, ok := h.originals[r.Source]; ok {
		r.Source = orig
	}
	h.mu.Unlock()
	h.stop.mark(r)
	h.mu.Lock()
	if h.keep {
		h.results = append(h.results, r)
	}
	h.fails.count(r)
	h.mu.Unlock()
}

// tell gives r to the hook of the call ctx belongs to, if any, then to
// Options.OnResult.
func (c *Client) tell(ctx context.Context, r *Result) {
	if h, ok := ctx.Value(hookKey{}).(*callHook); ok {
		h.see(r)
	}
	c.told(r)
}
