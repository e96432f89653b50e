package upload

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	raw "google.golang.org/api/storage/v1"

	"github.com/gcsput/gcsput/retry"
)

// Folders of hierarchical-namespace (HNS) buckets, through the JSON API's
// folders and operations resources
// (https://cloud.google.com/storage/docs/json_api/v1/folders). The official
// Go client offers folders only through the gRPC storage control client;
// gcsput speaks JSON everywhere, so these use google-api-go-client's
// storage/v1 service, with gcsput's retry policy.

// Folder is a folder of an HNS bucket. Name ends with "/".
type Folder struct {
	Bucket, Name string
	// Metageneration is the folder's metadata version; a rename moves it.
	Metageneration int64
	Created        time.Time
	Updated        time.Time
}

// ErrFolderNotEmpty matches a folder delete that GCS refused because
// objects or folders are under it. It is never retried.
var ErrFolderNotEmpty = errors.New("the folder is not empty")

// ErrFolderNotFound matches a folder that does not exist (404).
var ErrFolderNotFound = errors.New("no such folder")

// HierarchicalNamespace reports whether bucket has hierarchical namespace
// enabled, and so folders. A missing bucket matches storage.ErrBucketNotExist.
func (c *Client) HierarchicalNamespace(ctx context.Context, bucket string) (bool, error) {
	var on bool
	err := c.runner.Do(ctx, func(ctx context.Context) error {
		attrs, err := c.bucket(bucket).Attrs(ctx)
		if err != nil {
			return permanentIfMissing(err)
		}
		on = attrs.HierarchicalNamespace != nil && attrs.HierarchicalNamespace.Enabled
		return nil
	})
	return on, err
}

// Folders lists the folders of an HNS bucket whose names start with prefix
// (empty or ending with "/"), in name order: all of them with recursive,
// else prefix itself and those one level below it. Each page is retried
// under the retry policy; a bucket without hierarchical namespace is GCS's
// 400.
func (c *Client) Folders(ctx context.Context, bucket, prefix string, recursive bool) iter.Seq2[*Folder, error] {
	return func(yield func(*Folder, error) bool) {
		token, seen := "", map[string]bool{}
		for {
			var page *raw.Folders
			err := c.runner.Do(ctx, func(ctx context.Context) error {
				call := c.raw.Folders.List(bucket).Prefix(prefix).PageToken(token).Context(ctx)
				if !recursive {
					call = call.Delimiter("/")
				}
				var err error
				page, err = call.Do()
				return err
			})
			if err != nil {
				yield(nil, fmt.Errorf("list folders of gs://%s/%s: %w", bucket, prefix, err))
				return
			}
			for _, f := range page.Items {
				if !yield(folderOf(f), nil) {
					return
				}
			}
			if page.NextPageToken == "" {
				return
			}
			if seen[page.NextPageToken] { // a listing must end (STYLE 23)
				yield(nil, fmt.Errorf("list folders of gs://%s/%s: the server repeated a page token", bucket, prefix))
				return
			}
			seen[page.NextPageToken], token = true, page.NextPageToken
		}
	}
}

func folderOf(f *raw.Folder) *Folder {
	created, _ := time.Parse(time.RFC3339Nano, f.CreateTime)
	updated, _ := time.Parse(time.RFC3339Nano, f.UpdateTime)
	return &Folder{Bucket: f.Bucket, Name: f.Name, Metageneration: f.Metageneration, Created: created, Updated: updated}
}

// folderName is u's object as a folder name, with its trailing "/".
func folderName(u URL) string {
	if u.Object == "" || strings.HasSuffix(u.Object, "/") {
		return u.Object
	}
	return u.Object + "/"
}

// folderError maps GCS's refusals of a folder request to the sentinels:
// 404 (ErrFolderNotFound) and 409 on a delete (ErrFolderNotEmpty) are final.
func folderError(err error, u URL, deleting bool) error {
	var ge *googleapi.Error
	switch {
	case errors.As(err, &ge) && ge.Code == http.StatusNotFound:
		return retry.Permanent(fmt.Errorf("gs://%s/%s: %w: %w", u.Bucket, folderName(u), ErrFolderNotFound, err))
	case deleting && errors.As(err, &ge) && ge.Code == http.StatusConflict:
		return retry.Permanent(fmt.Errorf("gs://%s/%s: %w: %w", u.Bucket, folderName(u), ErrFolderNotEmpty, err))
	}
	return err
}

// DeleteFolder deletes the empty folder u of an HNS bucket. A folder with
// objects or folders under it is ErrFolderNotEmpty; a missing one
// ErrFolderNotFound. It is retried under the retry policy, and a retry
// that meets 404 has succeeded (an earlier attempt deleted it and its
// answer was lost).
func (c *Client) DeleteFolder(ctx context.Context, u URL) error {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	tries := 0
	return c.runner.Do(ctx, func(ctx context.Context) error {
		tries++
		err := c.raw.Folders.Delete(u.Bucket, folderName(u)).Context(ctx).Do()
		if tries > 1 && isStatus(err, http.StatusNotFound) {
			return nil
		}
		return folderError(err, u, true)
	})
}

// RenameFolder renames the folder src of an HNS bucket, with everything
// under it, to dst in the same bucket: one renameFolder call, which GCS
// answers with a long-running operation; RenameFolder polls it at
// operations.get until it is done, each poll that finds it running costing
// an attempt of the retry policy (its waits, count and deadline bound the
// wait). The call is retried on transient errors; a retry that finds src
// gone and dst there has succeeded (its first answer was lost).
func (c *Client) RenameFolder(ctx context.Context, src, dst URL) error {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if src.Bucket != dst.Bucket {
		return fmt.Errorf("rename folder %s to %s: %w: a folder is renamed inside its bucket only", src, dst, ErrBadOption)
	}
	var op *raw.GoogleLongrunningOperation
	tries := 0
	err = c.runner.Do(ctx, func(ctx context.Context) error {
		tries++
		var err error
		op, err = c.raw.Folders.Rename(src.Bucket, folderName(src), folderName(dst)).Context(ctx).Do()
		if tries > 1 && isStatus(err, http.StatusNotFound) {
			if _, gerr := c.raw.Folders.Get(dst.Bucket, folderName(dst)).Context(ctx).Do(); gerr == nil {
				op = nil // done by the attempt whose answer was lost
				return nil
			}
		}
		return folderError(err, src, false)
	})
	if err != nil || op == nil {
		return err
	}
	return c.awaitOperation(ctx, src.Bucket, op)
}

// awaitOperation polls op until it is done; a failed operation's error is
// returned with its code and message.
func (c *Client) awaitOperation(ctx context.Context, bucket string, op *raw.GoogleLongrunningOperation) error {
	id := op.Name[strings.LastIndex(op.Name, "/")+1:]
	err := c.runner.Do(ctx, func(ctx context.Context) error {
		if !op.Done {
			polled, err := c.raw.Operations.Get(bucket, id).Context(ctx).Do()
			if err != nil {
				return err
			}
			op = polled
		}
		if !op.Done {
			return fmt.Errorf("operation %s is still running: %w", id, retry.ErrNoProgress)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("wait for operation %s of gs://%s: %w", id, bucket, err)
	}
	if op.Error != nil {
		return fmt.Errorf("operation %s of gs://%s failed: %d %s", id, bucket, op.Error.Code, op.Error.Message)
	}
	return nil
}

// renamePrefix moves the folder prefix of an HNS bucket to toPrefix (same
// bucket) with one RenameFolder, when that gives what the object-by-object
// moves would: no holds to set on the destinations, each object already
// under the key the destination wants, the destination folder absent. It
// reports false (nothing done) when the rename does not fit or GCS
// refuses it (the destination folder exists: 409; it or its parent is
// missing: 404; 400), and the caller moves object by object. Its results
// are the objects listed, each StatusMoved.
func (c *Client) renamePrefix(ctx context.Context, bucket, prefix, toPrefix string, objs []*storage.ObjectAttrs, o MoveOptions) (bool, []*Result, error) {
	if prefix == "" || !o.Upload.Attrs.Holds.none() {
		return false, nil, nil
	}
	if hns, err := c.HierarchicalNamespace(ctx, bucket); err != nil || !hns {
		return false, nil, nil // a flat bucket (or one that cannot be read): object by object
	}
	for _, a := range objs {
		if a.Name == prefix || !c.atomicMoveFits(ctx, URL{bucket, a.Name}, URL{bucket, toPrefix + strings.TrimPrefix(a.Name, prefix)}, a, false) {
			return false, nil, nil
		}
	}
	err := c.RenameFolder(ctx, URL{bucket, prefix}, URL{bucket, toPrefix})
	var ge *googleapi.Error
	if errors.Is(err, ErrFolderNotFound) || errors.As(err, &ge) && (ge.Code == http.StatusConflict || ge.Code == http.StatusBadRequest) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, fmt.Errorf("move: renameFolder gs://%s/%s to gs://%s/%s: %w (what it moved is unknown: list both folders)", bucket, prefix, bucket, toPrefix, err)
	}
	results, err := c.moveAll(ctx, func(yield func(moveJob) bool) {
		for _, a := range objs {
			r := copyResult(URL{bucket, a.Name}, URL{bucket, toPrefix + strings.TrimPrefix(a.Name, prefix)})
			r.Attempts, r.Size, r.Status, r.Note = 1, a.Size, StatusMoved, "moved with its folder (renameFolder)"
			if !yield(moveJob{base: r, run: func(context.Context) *Result { return r }}) {
				return
			}
		}
	}, true)
	return true, results, err
}

// pruneFolders deletes, in an HNS bucket, the folders under prefix (not
// prefix itself) that deleting the objects named deleted may have left
// empty, deepest first: each parent folder of a deleted object up to
// prefix. A folder that still holds something (409) or is gone (404) is
// passed over in silence; each folder deleted, or failed otherwise, is a
// result (Note "empty folder"). In a flat bucket it does nothing.
func (c *Client) pruneFolders(ctx context.Context, bucket, prefix string, deleted []string, told func(*Result)) {
	if len(deleted) == 0 {
		return
	}
	if hns, err := c.HierarchicalNamespace(ctx, bucket); err != nil || !hns {
		return
	}
	seen := map[string]bool{}
	var folders []string
	for _, name := range deleted {
		for p := parentOf(name); len(p) > len(prefix) && strings.HasPrefix(p, prefix) && !seen[p]; p = parentOf(p) {
			seen[p] = true
			folders = append(folders, p)
		}
	}
	// Reversed name order is deepest first: a folder's name is the prefix
	// of the folders under it.
	slices.Sort(folders)
	slices.Reverse(folders)
	for _, f := range folders {
		u := URL{Bucket: bucket, Object: f}
		err := c.DeleteFolder(ctx, u)
		if errors.Is(err, ErrFolderNotEmpty) || errors.Is(err, ErrFolderNotFound) {
			continue
		}
		r := &Result{Dest: u.String(), Bucket: bucket, Object: f, Status: StatusDeleted, Note: "empty folder", Attempts: 1}
		if err != nil {
			r.Status, r.Err = StatusFailed, err
		}
		told(r)
	}
}

// parentOf is the folder ("a/b/") that holds name ("a/b/c" or "a/b/c/"), "" at the root.
func parentOf(name string) string {
	i := strings.LastIndex(strings.TrimSuffix(name, "/"), "/")
	if i < 0 {
		return ""
	}
	return name[:i+1]
}
