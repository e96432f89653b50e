package main

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

	"github.com/gcsput/gcsput/upload"
)

// The permissions a batch asks about before it starts, with what they let it do in the
// user's words.
const (
	permCreate = "storage.objects.create"
	permDelete = "storage.objects.delete"
	permList   = "storage.objects.list"
)

var permWords = map[string]string{
	permCreate: "write objects", permDelete: "delete objects", permList: "list objects",
}

// preflight finds, before the first transfer of a batch (cp -r, an upload of many files,
// sync), what would make every transfer of it fail alike: a bucket that does not exist (a
// typo), credentials that lack a permission the batch needs. It is one request per bucket
// (testIamPermissions, which itself needs no permission), and its answer is reported once,
// in the user's words, as a refusal (exit 2: nothing was transferred), instead of one
// identical 404 or 403 per file.
//
// It returns the context the batch runs under. When the answer is not known (the request
// itself failed for another reason, a server without the method), the batch goes ahead
// under a context that its first 403 or 404 ends (batchStop); when it is known, a 403 of
// one file (an object under a hold) fails that file alone, as before.
//
// This is the one place for checks of this kind: a requester-pays bucket without a
// billing project belongs here too.
func (j *job) preflight(ctx context.Context, bucket string, perms ...string) (context.Context, error) {
	granted, err := j.client.TestPermissions(ctx, bucket, perms...)
	switch {
	case errors.Is(err, storage.ErrBucketNotExist):
		return ctx, refusef("gs://%s: bucket does not exist (check its name, or 'gcsput ls gs://%s'); nothing was transferred", bucket, bucket)
	case ctx.Err() != nil:
		return ctx, err
	case err != nil:
		return j.stoppable(ctx), nil // not known: the batch's first such failure will say
	}
	var lacking []string
	for _, p := range perms {
		if !slices.Contains(granted, p) {
			lacking = append(lacking, permWords[p]+" ("+p+")")
		}
	}
	if len(lacking) > 0 {
		return ctx, refusef("gs://%s: these credentials may not %s; nothing was transferred (grant the permission, e.g. roles/storage.objectAdmin, or use --credentials with another key)",
			bucket, strings.Join(lacking, " or "))
	}
	return ctx, nil
}

// preflightAll runs preflight for each distinct bucket, in order: for downloads, whose
// failures do not stop a batch.
func (j *job) preflightAll(ctx context.Context, buckets []string, perms ...string) error {
	var seen []string
	for _, b := range buckets {
		if slices.Contains(seen, b) {
			continue
		}
		seen = append(seen, b)
		if _, err := j.preflight(ctx, b, perms...); err != nil {
			return err
		}
	}
	return nil
}

// errBatchStopped is the cause of a batch's context cancelled by batchStop.
var errBatchStopped = errors.New("stopped by the batch's first failure")

// batchStop ends an upload batch at its first failure that every other file of the batch
// would meet too, when preflight could not tell beforehand: a 403 (the credentials may not
// write there) or a 404 (an upload's 404 is a bucket that is not there). That failure is
// reported once; the transfers in flight that fail alike are counted, not printed again,
// and nothing more is started.
type batchStop struct {
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	first  *upload.Result // the failure that stopped the batch; nil while none has
	after  int            // failures alike after it, counted but not printed
}

// stoppable returns the context of an upload batch that its first failure of that kind
// ends (see batchStop). preflight calls it, once per job, when it could not tell.
func (j *job) stoppable(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(ctx)
	j.stop = &batchStop{cancel: cancel}
	return ctx
}

// quiet reports whether r is one more failure of a stopped batch, said once already. The
// first failure of the kind stops the batch and is printed as usual.
func (b *batchStop) quiet(r *upload.Result) bool {
	if b == nil || r.Status != upload.StatusFailed || !strings.HasPrefix(r.Dest, "gs://") || !everyFileFails(r.Err) {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.first == nil {
		b.first = r
		b.cancel(errBatchStopped)
		return false
	}
	b.after++
	return true
}

// everyFileFails reports whether an upload's error is one every other upload into the
// bucket would meet: 403 (no permission, a bucket closed to these credentials) or 404
// (the bucket does not exist).
func everyFileFails(err error) bool {
	var ge *googleapi.Error
	return errors.Is(err, storage.ErrBucketNotExist) ||
		errors.As(err, &ge) && (ge.Code == http.StatusForbidden || ge.Code == http.StatusNotFound)
}

// err is the error a stopped batch ends with (exit 1: a transfer was tried and failed),
// nil when it was not stopped.
func (b *batchStop) err() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.first == nil {
		return nil
	}
	msg := fmt.Sprintf("gs://%s: %s: stopped at the first such failure, which every file would meet", bucketOf(b.first.Dest), fatalWords(b.first.Err))
	if b.after > 0 {
		msg += fmt.Sprintf(" (%s in flight failed alike)", plural(b.after, "more transfer"))
	}
	return errors.New(msg + "; nothing more was started")
}

// fatalWords says what an everyFileFails error means, in the user's words.
func fatalWords(err error) string {
	var ge *googleapi.Error
	if errors.As(err, &ge) && ge.Code == http.StatusForbidden {
		return "these credentials may not write there (403: " + ge.Message + ")"
	}
	return "bucket does not exist (404)"
}

// bucketOf is the bucket of a gs:// URL.
func bucketOf(url string) string {
	b, _, _ := strings.Cut(strings.TrimPrefix(url, "gs://"), "/")
	return b
}
