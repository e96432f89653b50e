package upload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/glob"
)

// ErrNoMatch is matched (errors.Is) by a [NoMatchError]: a wildcard that
// matched nothing.
var ErrNoMatch = errors.New("no match")

// NoMatchError says a wildcard pattern matched nothing. Pattern is as the
// caller gave it (a gs:// URL, or a local path when Local is set).
type NoMatchError struct {
	Pattern string
	Local   bool
}

func (e *NoMatchError) Error() string {
	if e.Local {
		return "no files match " + e.Pattern
	}
	return "no objects match " + e.Pattern
}

// Is makes errors.Is(err, ErrNoMatch) true.
func (e *NoMatchError) Is(target error) bool { return target == ErrNoMatch }

// HasWildcard reports whether an object name or a local path holds a
// wildcard, as gsutil and gcloud storage read them: "*", "**", "?" or a
// "[...]" class. Braces and backslashes are not wildcards.
func HasWildcard(name string) bool { return glob.HasMeta(name, glob.Wildcard) }

// GlobOptions are the choices of [Client.Glob]. The zero value yields
// objects only.
type GlobOptions struct {
	// Folders, when the pattern's wildcards are all in its last segment and
	// none is "**" ("docs/*", "logs/2024-0?"), also yields each folder whose
	// name matches, once, as an ObjectAttrs with only Prefix set ("docs/old/"),
	// as List with delimiter "/" does; the objects inside it are not yielded.
	// Ignored for other patterns, whose matches are objects at any depth.
	Folders bool
	// SoftDeleted yields the soft-deleted generations that match instead of
	// live objects (each one; a name may have several), and no fallback to
	// the exact name: a pattern that matches none is a NoMatchError.
	SoftDeleted bool
}

// Glob yields the objects whose names match the wildcard pattern.Object, in
// name order, as gsutil and gcloud storage expand gs:// URLs:
//
//	"*"     any run of characters but "/": docs/*.txt
//	"**"    any run of characters, "/" too: docs/**.txt is every .txt under
//	        docs/ at any depth; as a whole segment it also matches none
//	        (docs/**/a.txt names docs/a.txt)
//	"?"     one character but "/"
//	"[ab]"  one character of the class; [a-z] a range; [!ab] not of it
//
// The listing asks only for names that start with the pattern's literal
// prefix (docs/ above), and sends the JSON API's matchGlob when its syntax can
// say the pattern, so the server returns only matches; every name returned is
// still matched here, so the result does not depend on how a server reads
// matchGlob. A pattern without wildcards, and one that matched nothing, names
// the object of that exact name ("report[1].pdf" is an object too); when there
// is none, Glob yields a [NoMatchError] naming the pattern. The iteration stops
// at the first error: a listing that fails (the bucket does not exist, a
// request failed after its retries) is yielded as that error.
func (c *Client) Glob(ctx context.Context, pattern URL, o GlobOptions) iter.Seq2[*storage.ObjectAttrs, error] {
	return func(yield func(*storage.ObjectAttrs, error) bool) {
		ctx, leave, err := c.enter(ctx) // Close cancels and waits for it
		if err != nil {
			yield(nil, err)
			return
		}
		defer leave()
		p, err := glob.Compile(pattern.Object, glob.Wildcard)
		if err != nil {
			yield(nil, fmt.Errorf("upload: %s: %w", pattern, err))
			return
		}
		found := 0
		if HasWildcard(pattern.Object) {
			for a, err := range c.list(ctx, globQuery(p, o), pattern.Bucket) {
				if err != nil {
					yield(nil, err)
					return
				}
				name := a.Name
				if a.Prefix != "" {
					name = strings.TrimSuffix(a.Prefix, "/")
				}
				if !p.Match(name) {
					continue
				}
				found++
				if !yield(a, nil) {
					return
				}
			}
		}
		switch {
		case found == 0 && o.SoftDeleted:
			yield(nil, &NoMatchError{Pattern: pattern.String()})
		case found == 0:
			yield(c.exactly(ctx, pattern))
		}
	}
}

// globQuery is the listing that finds a pattern's matches.
func globQuery(p *glob.Pattern, o GlobOptions) *storage.Query {
	q := &storage.Query{Prefix: p.Prefix(), SoftDeleted: o.SoftDeleted}
	if o.Folders && p.OneSegment() {
		q.Delimiter = "/"
		q.MatchGlob, _ = p.MatchGlobOrUnder() // folders are matched by their names
		return q
	}
	q.MatchGlob, _ = p.MatchGlob()
	return q
}

// exactly returns the object named as the pattern is written, or a
// NoMatchError when there is none.
func (c *Client) exactly(ctx context.Context, pattern URL) (*storage.ObjectAttrs, error) {
	a, err := c.Stat(ctx, pattern)
	if errors.Is(err, storage.ErrObjectNotExist) {
		return nil, &NoMatchError{Pattern: pattern.String()}
	}
	return a, err
}

// GlobFiles returns the local paths that match a wildcard pattern, in lexical
// order, by the rules of [Client.Glob] ("/" or the OS separator between
// segments): the files, directories and symlinks it names, spelled as the
// pattern spells them ("./*.txt" gives "./a.txt"). Only the directory before
// the first wildcard is walked, and without "**" no deeper than the pattern
// reaches; symlinks to directories are not followed. A pattern without
// wildcards, or one that matched nothing, names the path of that exact name;
// when there is none the error is a [NoMatchError]. A directory that cannot
// be read is an error.
func GlobFiles(pattern string) ([]string, error) {
	slash := filepath.ToSlash(pattern)
	p, err := glob.Compile(slash, glob.Wildcard)
	if err != nil {
		return nil, fmt.Errorf("upload: %s: %w", pattern, err)
	}
	var out []string
	if HasWildcard(slash) {
		if out, err = walkMatches(p, slash); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		if _, err := os.Lstat(pattern); err == nil {
			return []string{pattern}, nil
		}
		return nil, &NoMatchError{Pattern: pattern, Local: true}
	}
	return out, nil
}

// walkMatches walks the directory before the first wildcard of p (slash is
// the pattern with "/" separators) and collects the paths p matches.
func walkMatches(p *glob.Pattern, slash string) ([]string, error) {
	baseSlash := p.Prefix()[:strings.LastIndex(p.Prefix(), "/")+1] // "", "dir/" or "/"
	base := "."
	if baseSlash != "" {
		base = filepath.FromSlash(baseSlash)
	}
	// Without "**" a match is exactly as deep as the pattern: deeper
	// directories need not be read.
	depth := -1
	if !strings.Contains(slash, "**") {
		depth = strings.Count(slash[len(baseSlash):], "/") + 1
	}
	var out []string
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == base && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll // nothing can match under a directory that is not there
			}
			return err
		}
		rel, err := filepath.Rel(base, path)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if name := baseSlash + rel; p.Match(name) {
			out = append(out, filepath.FromSlash(name))
		}
		if d.IsDir() && depth > 0 && strings.Count(rel, "/")+1 >= depth {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("expanding %s: %w", slash, err)
	}
	return out, nil
}
