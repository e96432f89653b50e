// Package filter decides which relative paths a sync takes, by rclone's
// --include and --exclude rules, so that a user's rclone habits carry over.
//
// A path is relative to the root of the transfer, with "/" separators and no
// leading slash ("a/b/x.tmp"). Each pattern is a glob:
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
	"fmt"
	"regexp"
	"strings"
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

// compile turns a glob into an anchored regular expression.
func compile(glob string) (*regexp.Regexp, error) {
	if glob == "" || glob == "/" {
		return nil, fmt.Errorf("filter: empty pattern %q: give a glob such as '*.tmp' or '/cache/'", glob)
	}
	g := glob
	if strings.HasSuffix(g, "/") {
		g += "**"
	}
	var re strings.Builder
	if rest, ok := strings.CutPrefix(g, "/"); ok {
		re.WriteString("^")
		g = rest
	} else {
		re.WriteString("(?:^|/)")
	}
	if err := translate(&re, g, glob); err != nil {
		return nil, err
	}
	re.WriteString("$")
	return regexp.Compile(re.String())
}

// translate writes the regular expression for glob g; orig names the
// pattern in errors.
func translate(re *strings.Builder, g, orig string) error {
	inBrace := false
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '\\':
			if i+1 == len(g) {
				return fmt.Errorf("filter: pattern %q ends with a lone backslash", orig)
			}
			i++
			re.WriteString(regexp.QuoteMeta(g[i : i+1]))
		case '*':
			if i+1 < len(g) && g[i+1] == '*' {
				re.WriteString(".*")
				i++
			} else {
				re.WriteString("[^/]*")
			}
		case '?':
			re.WriteString("[^/]")
		case '[':
			end, err := class(re, g, i, orig)
			if err != nil {
				return err
			}
			i = end
		case '{':
			if inBrace {
				return fmt.Errorf("filter: pattern %q nests braces", orig)
			}
			inBrace = true
			re.WriteString("(?:")
		case ',':
			if inBrace {
				re.WriteString("|")
			} else {
				re.WriteString(",")
			}
		case '}':
			if !inBrace {
				return fmt.Errorf("filter: pattern %q has '}' without '{'", orig)
			}
			inBrace = false
			re.WriteString(")")
		default:
			re.WriteString(regexp.QuoteMeta(g[i : i+1]))
		}
	}
	if inBrace {
		return fmt.Errorf("filter: pattern %q has '{' without '}'", orig)
	}
	return nil
}

// class writes the character class that starts at g[i] ('[') and returns the
// index of its closing ']'. A negated class never matches "/".
func class(re *strings.Builder, g string, i int, orig string) (int, error) {
	j := i + 1
	neg := j < len(g) && (g[j] == '!' || g[j] == '^')
	if neg {
		j++
	}
	start := j
	if j < len(g) && g[j] == ']' { // a leading ']' is a member
		j++
	}
	for j < len(g) && g[j] != ']' {
		j++
	}
	if j == len(g) {
		return 0, fmt.Errorf("filter: pattern %q has '[' without ']'", orig)
	}
	body := strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(g[start:j])
	if neg {
		re.WriteString("[^/" + body + "]")
	} else {
		re.WriteString("(?:[" + body + "])")
	}
	return j, nil
}
