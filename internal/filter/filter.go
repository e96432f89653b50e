// Package filter decides which relative paths a sync takes, by rclone's
// --include and --exclude rules, so that a user's rclone habits carry over.
//
// A path is relative to the root of the transfer, with "/" separators and no
// leading slash ("a/b/x.tmp"). Each pattern is a glob, compiled by package
// glob (its Filter dialect), the engine gs:// and local wildcards use too:
//
//	glob     matches
//	*        any run of characters except "/"
//	**       any run of characters, "/" included
//	?        one character except "/"
//	[a-z]    one character of the class ([!a-z] or [^a-z]: not of it)
//	{a,b}    either alternative (each may hold globs, not braces)
//	\c       the character c itself
//
// A pattern that starts with "/" is anchored at the root. Any other pattern
// matches at the end of the path, on whole path elements: "*.tmp" matches
// "x.tmp" and "a/b/x.tmp", "b/x.tmp" matches "a/b/x.tmp" but not "ab/x.tmp".
// A pattern that ends with "/" names a directory and everything below it
// ("cache/" is "cache/**").
//
// Rules are tried in order, includes first, then excludes, and the first that
// matches decides. When there is any include, a path that no rule matches is
// excluded (rclone's implicit "- /**"); otherwise it is included.
package filter

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gcsput/gcsput/internal/glob"
)

// Rules is a compiled list of include and exclude patterns. The zero value
// and nil include every path.
type Rules struct {
	rules       []rule
	anyIncludes bool
}

type rule struct {
	include bool
	pattern string
	re      *regexp.Regexp
}

// New compiles include and exclude patterns. A pattern that cannot be
// compiled is an error naming it.
func New(include, exclude []string) (*Rules, error) {
	r := &Rules{anyIncludes: len(include) > 0}
	for i, list := range [][]string{include, exclude} {
		for _, p := range list {
			re, err := compile(p)
			if err != nil {
				return nil, err
			}
			r.rules = append(r.rules, rule{include: i == 0, pattern: p, re: re})
		}
	}
	return r, nil
}

// Match reports whether path is taken, and the pattern that decided it
// ("" when none matched).
func (r *Rules) Match(path string) (bool, string) {
	if r == nil {
		return true, ""
	}
	for _, ru := range r.rules {
		if ru.re.MatchString(path) {
			return ru.include, ru.pattern
		}
	}
	return !r.anyIncludes, ""
}

// Empty reports whether r takes every path.
func (r *Rules) Empty() bool { return r == nil || len(r.rules) == 0 }

// compile turns a glob into an anchored regular expression. The glob itself
// is translated by package glob, gcsput's one engine (Filter dialect); the
// anchoring, the match at the end of the path and the trailing "/" are
// rclone's rules and stay here.
func compile(pattern string) (*regexp.Regexp, error) {
	if pattern == "" || pattern == "/" {
		return nil, fmt.Errorf("filter: empty pattern %q: give a glob such as '*.tmp' or '/cache/'", pattern)
	}
	g := pattern
	if strings.HasSuffix(g, "/") {
		g += "**"
	}
	anchor := "(?:^|/)"
	if rest, ok := strings.CutPrefix(g, "/"); ok {
		anchor, g = "^", rest
	}
	body, err := glob.Translate(g, glob.Filter)
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), strconv.Quote(g), strconv.Quote(pattern)))
	}
	return regexp.Compile(anchor + body + "$")
}
