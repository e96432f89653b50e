// Package glob is gcsput's one glob engine. It compiles a glob to a regular
// expression in one of two dialects, finds the literal prefix a listing can
// narrow by, and writes the JSON API's matchGlob form of a pattern when that
// syntax can say it. The wildcards of gs:// URLs and local paths
// ([Wildcard]) and sync's --include/--exclude rules ([Filter], through
// package filter) are both compiled here.
//
//	glob     Wildcard (gsutil, gcloud)          Filter (rclone)
//	*        any run of characters but "/"      the same
//	**       any run of characters, "/" too;    the same, without the
//	         a whole segment ("a/**/b") also    zero-segment rule
//	         matches no segment ("a/b")
//	?        one character but "/"              the same
//	[a-z]    one character of the class;        the same; an unclosed
//	         [!a-z] or [^a-z]: not of it, nor   "[" is an error
//	         "/"; an unclosed "[" is literal
//	{a,b}    literal                            either alternative
//	\c       literal backslash                  the character c itself
//
// Wildcard follows gsutil's meaning of "**": "gs://b/**.txt" is every .txt
// object at any depth, where doublestar, zsh and bash globstar would give
// only the top level's. Braces and backslashes are literal there because
// neither gsutil nor gcloud give them a meaning in a URL, and object names
// may hold them.
package glob

import (
	"fmt"
	"regexp"
	"strings"
)

// Syntax is a dialect of glob.
type Syntax int

const (
	// Wildcard is the dialect of gs:// URLs and local paths, as gsutil and
	// gcloud storage expand them.
	Wildcard Syntax = iota
	// Filter is the dialect of sync's --include and --exclude rules, as
	// rclone reads them.
	Filter
)

// Pattern is a compiled glob, matched against whole names.
type Pattern struct {
	text   string
	syntax Syntax
	re     *regexp.Regexp
	prefix string
}

// Compile compiles a glob that must match a whole name. A pattern that
// cannot be compiled is an error naming it.
func Compile(text string, syn Syntax) (*Pattern, error) {
	body, err := Translate(text, syn)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile("^" + body + "$")
	if err != nil {
		return nil, fmt.Errorf("glob: pattern %q: %w", text, err)
	}
	return &Pattern{text: text, syntax: syn, re: re, prefix: Prefix(text, syn)}, nil
}

// Match reports whether name matches the whole pattern.
func (p *Pattern) Match(name string) bool { return p.re.MatchString(name) }

// String is the pattern as written.
func (p *Pattern) String() string { return p.text }

// Prefix is the literal text before the first wildcard: every name that
// matches starts with it.
func (p *Pattern) Prefix() string { return p.prefix }

// OneSegment reports whether every wildcard is in the last "/"-separated
// segment and none is "**": every match is then a name directly under the
// prefix's folder, and a listing with delimiter "/" sees them all.
func (p *Pattern) OneSegment() bool {
	rest := p.text[len(p.prefix):]
	return !strings.Contains(rest, "/") && !strings.Contains(rest, "**")
}

// HasMeta reports whether text holds a wildcard of the dialect: whether it
// matches anything but itself.
func HasMeta(text string, syn Syntax) bool {
	if syn == Filter {
		return strings.ContainsAny(text, `*?[{\`)
	}
	return Prefix(text, syn) != text
}

// Prefix is the literal text before the first wildcard of text.
func Prefix(text string, syn Syntax) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '*' || c == '?':
			return b.String()
		case c == '[' && (syn == Filter || classEnd(text, i) > 0):
			return b.String()
		case syn == Filter && c == '{':
			return b.String()
		case syn == Filter && c == '\\' && i+1 < len(text):
			i++
			c = text[i]
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Translate returns the regular expression, not anchored, for the glob text.
func Translate(text string, syn Syntax) (string, error) {
	var re strings.Builder
	inBrace := false
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '*':
			i = star(&re, text, i, syn)
		case c == '?':
			re.WriteString("[^/]")
		case c == '[':
			end := classEnd(text, i)
			if end < 0 {
				if syn == Filter {
					return "", fmt.Errorf("filter: pattern %q has '[' without ']'", text)
				}
				re.WriteString(`\[`)
				continue
			}
			writeClass(&re, text[i:end+1])
			i = end
		case syn == Filter && c == '\\':
			if i+1 == len(text) {
				return "", fmt.Errorf("filter: pattern %q ends with a lone backslash", text)
			}
			i++
			re.WriteString(regexp.QuoteMeta(text[i : i+1]))
		case syn == Filter && c == '{':
			if inBrace {
				return "", fmt.Errorf("filter: pattern %q nests braces", text)
			}
			inBrace = true
			re.WriteString("(?:")
		case syn == Filter && c == ',' && inBrace:
			re.WriteString("|")
		case syn == Filter && c == '}':
			if !inBrace {
				return "", fmt.Errorf("filter: pattern %q has '}' without '{'", text)
			}
			inBrace = false
			re.WriteString(")")
		default:
			re.WriteString(regexp.QuoteMeta(text[i : i+1]))
		}
	}
	if inBrace {
		return "", fmt.Errorf("filter: pattern %q has '{' without '}'", text)
	}
	return re.String(), nil
}

// star writes the expression for the run of '*' that starts at text[i] and
// returns the index of its last '*' (or of the '/' it took in).
func star(re *strings.Builder, text string, i int, syn Syntax) int {
	j := i
	for j < len(text) && text[j] == '*' {
		j++
	}
	if j-i == 1 {
		re.WriteString("[^/]*")
		return i
	}
	// "**" as a whole segment ("a/**/b", "**/b") also matches no segment at
	// all, as gsutil's does: gs://b/dir/**/f.txt names gs://b/dir/f.txt too.
	wholeSegment := (i == 0 || text[i-1] == '/') && j < len(text) && text[j] == '/'
	// The s flag: "." must take a "\n" in a name, as "[^/]*" does for "*".
	if syn == Wildcard && wholeSegment {
		re.WriteString("(?s:.*/)?")
		return j
	}
	re.WriteString("(?s:.*)")
	return j - 1
}

// classEnd returns the index of the ']' that closes the class starting at
// text[i] ('['), or -1. A ']' right after "[" or "[!" is a member.
func classEnd(text string, i int) int {
	j := i + 1
	if j < len(text) && (text[j] == '!' || text[j] == '^') {
		j++
	}
	if j < len(text) && text[j] == ']' {
		j++
	}
	for ; j < len(text); j++ {
		if text[j] == ']' {
			return j
		}
	}
	return -1
}

// writeClass writes the expression of one class, "[...]" whole. A negated
// class never matches "/", which separates the segments it stands in.
func writeClass(re *strings.Builder, class string) {
	body := class[1 : len(class)-1]
	neg := body != "" && (body[0] == '!' || body[0] == '^')
	if neg {
		body = body[1:]
	}
	body = strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(body)
	if neg {
		re.WriteString("[^/" + body + "]")
	} else {
		re.WriteString("(?:[" + body + "])")
	}
}
