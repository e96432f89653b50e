package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
// matches, in name order; the others stay as given. mv expands its sources
// with it.
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

// expandDownloadSources expands the gs:// wildcards among cp's sources: the
// objects each matches and, with -r, the folders (as "gs://b/folder/"). wild
// says whether any source held a wildcard: the destination is then a folder,
// whatever the number of matches, so a rerun names the same files.
func expandDownloadSources(ctx context.Context, c *upload.Client, srcs []string, recursive bool) (out []string, wild bool, err error) {
	for _, op := range srcs {
		u, err := parseRemote(op)
		if err != nil || !upload.HasWildcard(u.object) {
			out = append(out, op)
			continue
		}
		wild = true
		matches, err := globMatches(ctx, c, u.lib(), recursive)
		if err != nil {
			return nil, true, err
		}
		for _, a := range matches {
			out = append(out, "gs://"+u.bucket+"/"+a.Name+a.Prefix)
		}
	}
	return out, wild, nil
}

// expandUploadSources expands the local wildcards among cp's sources. Without
// -r a directory a wildcard matched is omitted with a note (as gsutil does);
// with -r a match inside a matched directory is dropped, the directory
// bringing it.
func (a *app) expandUploadSources(srcs []string, recursive bool) (out []string, wild bool, err error) {
	for _, op := range srcs {
		if op == "-" || isRemote(op) || !upload.HasWildcard(op) {
			out = append(out, op)
			continue
		}
		wild = true
		paths, err := upload.GlobFiles(op)
		if err != nil {
			return nil, true, err
		}
		var dirs []string
		for _, p := range paths {
			fi, err := os.Stat(p)
			isDir := err == nil && fi.IsDir()
			switch {
			case isDir && !recursive:
				fmt.Fprintf(a.stderr, "gcsput: omitting directory %s (matched by %s): add -r to copy directories\n", escapeText(p), escapeText(op))
			case under(p, dirs):
			default:
				if isDir {
					dirs = append(dirs, p)
				}
				out = append(out, p)
			}
		}
	}
	if wild && len(out) == 0 {
		return nil, true, usagef("nothing to copy: the wildcards matched only directories; add -r to copy them")
	}
	return out, wild, nil
}

// under reports whether path is inside one of dirs.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(path, strings.TrimSuffix(d, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// checkUploadCollisions refuses a plan in which two sources would land on
// one object or prefix: "**" flattens, and a.txt and sub/a.txt both become
// DST/a.txt. Nothing is sent.
func checkUploadCollisions(plan []uploadItem) error {
	seen := map[string]string{}
	for _, it := range plan {
		key := it.dst.bucket + "/" + it.dst.name
		if prev, ok := seen[key]; ok {
			return usagef("%s and %s would both be copied to gs://%s: copy them in two commands, or name the folders (cp -r)",
				prev, it.src.path, key)
		}
		seen[key] = it.src.path
	}
	return nil
}

// checkDownloadCollisions refuses a download plan in which two wildcard matches
// would land on one local path, or one needs the other's path as a directory:
// "**" flattens, so docs/a.txt and docs/old/a.txt both become DST/a.txt, and
// with -r a matched folder old/ and an object old both want DST/old. cp's help
// promises this before anything is sent; left to the download, the first match
// would be written and only the second would fail.
func checkDownloadCollisions(plan []downloadItem) error {
	seen := make(map[string]downloadItem, len(plan))
	for _, it := range plan {
		key := filepath.Clean(it.dst)
		if prev, ok := seen[key]; ok {
			return downloadCollision(prev, it, key)
		}
		seen[key] = it
	}
	for key, it := range seen {
		for d := filepath.Dir(key); d != filepath.Dir(d); d = filepath.Dir(d) {
			if prev, ok := seen[d]; ok {
				return downloadCollision(prev, it, d)
			}
		}
	}
	return nil
}

func downloadCollision(a, b downloadItem, path string) error {
	return usagef("%s and %s would both be downloaded to %s: copy them in two commands, or into separate directories",
		a.src, b.src, path)
}

// expandRecursive expands the wildcards among the operands of a recursive
// command (rm -r): a matched folder joins the prefixes, taken whole; a matched
// object is returned as listed (with its generation). Operands without
// wildcards stay prefixes.
func expandRecursive(ctx context.Context, c *upload.Client, urls []upload.URL) (prefixes []upload.URL, objects []*storage.ObjectAttrs, err error) {
	for _, u := range urls {
		if !upload.HasWildcard(u.Object) {
			prefixes = append(prefixes, u)
			continue
		}
		matches, err := globMatches(ctx, c, u, true)
		if err != nil {
			return nil, nil, err
		}
		for _, a := range matches {
			if a.Prefix != "" {
				prefixes = append(prefixes, upload.URL{Bucket: u.Bucket, Object: a.Prefix})
			} else {
				objects = append(objects, a)
			}
		}
	}
	return prefixes, objects, nil
}
