package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/gcsput/gcsput/upload"
)

// hnsFolders returns the folders under prefix (prefix itself included) of
// a bucket with hierarchical namespace, deepest first, the order in which
// they can be deleted (a folder is deleted only when empty); nil for a flat
// bucket. A bucket whose namespace cannot be read is treated as flat, with
// a warning: its objects are still removed, its folders are not.
func (a *app) hnsFolders(ctx context.Context, c *upload.Client, bucket, prefix string) ([]upload.URL, error) {
	hns, err := c.HierarchicalNamespace(ctx, bucket)
	if err != nil {
		fmt.Fprintf(a.stderr, "gcsput: warning: cannot tell whether gs://%s has folders (%s); its folders, if any, are left\n",
			escapeText(bucket), escapeText(redact(err.Error())))
		return nil, nil
	}
	if !hns {
		return nil, nil
	}
	var out []upload.URL
	for f, err := range c.Folders(ctx, bucket, prefix, true) {
		if err != nil {
			return nil, err
		}
		out = append(out, upload.URL{Bucket: bucket, Object: f.Name})
	}
	// A folder sorts before the folders under it (its name is their
	// prefix): reversed name order is deepest first.
	slices.SortFunc(out, func(x, y upload.URL) int {
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

// removeFolders deletes folders (deepest first), or says it would.
func (rm *remover) removeFolders(ctx context.Context, folders []upload.URL) error {
	failed := 0
	for _, f := range folders {
		if rm.dryRun {
			fmt.Fprintf(rm.a.stdout, "would remove %s\n", escapeText(f.String()))
			continue
		}
		if err := rm.c.DeleteFolder(ctx, f); err != nil {
			fmt.Fprintf(rm.a.stderr, "gcsput: %s\n", escapeText(redact(err.Error())))
			failed++
			continue
		}
		fmt.Fprintf(rm.a.stdout, "removed %s\n", escapeText(f.String()))
	}
	if failed > 0 {
		return &failedError{failed: failed, total: len(folders), noun: "folders"}
	}
	return nil
}
