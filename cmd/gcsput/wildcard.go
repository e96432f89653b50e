package main

import (
	"context"
	"errors"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/upload"
)

// Wildcards. gs:// operands of cp, mv, ls, rm, du, stat and cat, and cp's local
// sources the shell did not expand (quoted), may hold gsutil's wildcards: "*"
// within one folder, "**" across folders, "?", "[ab]". The library expands
// them (upload.Client.Glob, upload.GlobFiles); these helpers turn the matches
// into operands. Every pattern is expanded before a command acts, so a pattern
// that matches nothing (an error naming it, exit 1 like a missing object)
// stops the command before anything changed.

// expandObjects replaces each URL holding a wildcard by the objects it
// matches, in name order; the others stay as given. stat and cat expand their
// operands with it (rm's are upload.Client.Remove's to expand).
func expandObjects(ctx context.Context, c *upload.Client, urls []upload.URL) ([]upload.URL, error) {
	var out []upload.URL
	for _, u := range urls {
		if !upload.HasWildcard(u.Object) {
			out = append(out, u)
			continue
		}
		matches, err := globMatches(ctx, c, u, false)
		if err != nil {
			return nil, err
		}
		for _, a := range matches {
			out = append(out, upload.URL{Bucket: u.Bucket, Object: a.Name})
		}
	}
	return out, nil
}

// globMatches is every match of one pattern, in name order: objects and, with
// folders, the folders (Prefix set) a one-segment pattern matches.
func globMatches(ctx context.Context, c *upload.Client, u upload.URL, folders bool) ([]*storage.ObjectAttrs, error) {
	var out []*storage.ObjectAttrs
	for a, err := range c.Glob(ctx, u, upload.GlobOptions{Folders: folders}) {
		if errors.Is(err, upload.ErrNoMatch) {
			return nil, err
		}
		if err != nil {
			return nil, objectError(u, err)
		}
		out = append(out, a)
	}
	return out, nil
}
