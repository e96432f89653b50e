package upload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/objerr"
)

// Wildcards among the operands of CopyAll and MoveAll: gs:// operands, and
// local sources the shell did not expand (quoted), may hold gsutil's "*",
// "**", "?" and "[ab]". Every pattern is expanded before anything is sent,
// so a pattern that matches nothing stops the call before anything changed.

// globMatches is every match of one pattern, in name order: objects and,
// with folders, the folders (Prefix set) a one-segment pattern matches.
func (c *Client) globMatches(ctx context.Context, u URL, folders bool) ([]*storage.ObjectAttrs, error) {
	var out []*storage.ObjectAttrs
	for a, err := range c.Glob(ctx, u, GlobOptions{Folders: folders}) {
		if errors.Is(err, ErrNoMatch) {
			return nil, err
		}
		if err != nil {
			return nil, objerr.New(u.Bucket, u.Object, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// expandRemoteSources expands the gs:// wildcards among the sources: the
// objects each matches and, recursive, the folders (as "gs://b/folder/").
// wild says whether any source held a wildcard: the destination is then a
// folder, whatever the number of matches, so a rerun names the same files.
//
// probe is the prefix probe for the sources out holds: c.probe for an
// operand as given, none for a match (known to be an object or a folder).
func (c *Client) expandRemoteSources(ctx context.Context, srcs []string, recursive bool) (out []string, wild bool, probe prefixProbe, err error) {
	matched := map[string]bool{} // "bucket/name" of the objects matched
	probe = func(ctx context.Context, bucket, prefix string) (bool, error) {
		if matched[bucket+"/"+strings.TrimSuffix(prefix, "/")] {
			return false, nil
		}
		return c.probe(ctx, bucket, prefix)
	}
	for _, op := range srcs {
		u, err := ParseURL(op)
		if err != nil || !HasWildcard(u.Object) {
			out = append(out, op)
			continue
		}
		wild = true
		matches, err := c.globMatches(ctx, u, recursive)
		if err != nil {
			return nil, true, nil, err
		}
		for _, a := range matches {
			out = append(out, "gs://"+u.Bucket+"/"+a.Name+a.Prefix)
			if a.Prefix == "" {
				matched[u.Bucket+"/"+a.Name] = true
			}
		}
	}
	return out, wild, probe, nil
}

// expandLocalSources expands the local wildcards among the sources. Not
// recursive, a directory a wildcard matched is omitted (told to omit, as
// gsutil says so); recursive, a match inside a matched directory is
// dropped, the directory bringing it.
func expandLocalSources(srcs []string, recursive bool, omit func(dir, pattern string)) (out []string, wild bool, err error) {
	for _, op := range srcs {
		if op == "-" || naming.IsRemote(op) || !HasWildcard(op) {
			out = append(out, op)
			continue
		}
		wild = true
		paths, err := GlobFiles(op)
		if errors.Is(err, ErrNoMatch) {
			return nil, true, &operandError{msg: err.Error(), kind: ErrBadOperand, cause: err} // as a missing file is
		}
		if err != nil {
			return nil, true, err
		}
		var dirs []string
		for _, p := range paths {
			fi, err := os.Stat(p)
			isDir := err == nil && fi.IsDir()
			switch {
			case isDir && !recursive:
				if omit != nil {
					omit(p, op)
				}
			case underAny(p, dirs):
			default:
				if isDir {
					dirs = append(dirs, p)
				}
				out = append(out, p)
			}
		}
	}
	if wild && len(out) == 0 {
		return nil, true, badOperand("nothing to copy: the wildcards matched only directories; add -r to copy them")
	}
	return out, wild, nil
}

// underAny reports whether path is inside one of dirs.
func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(path, strings.TrimSuffix(d, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
