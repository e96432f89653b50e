package fakegcs

import (
	"errors"
	"unicode/utf8"
)

// matchGlob is the compiled matchGlob parameter of an objects.list request
// (cloud.google.com/storage/docs/json_api/v1/objects/list#list-object-glob):
//
//	"*"      any run of characters except "/"
//	"**"     any run of characters, "/" included
//	"?"      one character except "/"
//	"[abc]"  one character of the set; [a-z] of the range; [!abc] not of it
//	"{a,b}"  either alternative, each a glob of its own (braces may nest)
//	"\c"     the character c itself
//
// A pattern is matched against the whole object name. It is fakegcs's own
// implementation, written from the documentation, and shares nothing with
// the clients it serves: a client's translation to matchGlob is checked
// against it, not against itself.
type matchGlob struct {
	alts [][]rune // the pattern with its braces expanded: a name matches any
}

var errBadGlob = errors.New("malformed glob")

// parseMatchGlob compiles a matchGlob value; a malformed one (an unclosed
// "[" or "{", a lone "}" or a trailing "\") is an error.
func parseMatchGlob(s string) (*matchGlob, error) {
	if !utf8.ValidString(s) {
		return nil, errBadGlob
	}
	alts, err := expandBraces([]rune(s))
	if err != nil {
		return nil, err
	}
	for _, a := range alts {
		if err := checkClasses(a); err != nil {
			return nil, err
		}
	}
	return &matchGlob{alts: alts}, nil
}

// match reports whether name matches the glob.
func (g *matchGlob) match(name string) bool {
	s := []rune(name)
	for _, a := range g.alts {
		if globMatch(a, s) {
			return true
		}
	}
	return false
}

// expandBraces turns p into the list of brace-free patterns it stands for.
func expandBraces(p []rune) ([][]rune, error) {
	open := -1
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 == len(p) {
				return nil, errBadGlob
			}
			i++
		case '[':
			end := classClose(p, i)
			if end < 0 {
				return nil, errBadGlob
			}
			i = end
		case '{':
			open = i
		case '}':
			if open < 0 {
				return nil, errBadGlob
			}
		}
		if open >= 0 {
			break
		}
	}
	if open < 0 {
		return [][]rune{p}, nil
	}
	end, parts, err := braceParts(p, open)
	if err != nil {
		return nil, err
	}
	var out [][]rune
	for _, part := range parts {
		joined := append(append(append([]rune{}, p[:open]...), part...), p[end+1:]...)
		more, err := expandBraces(joined)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// braceParts splits the brace group that opens at p[open] at its top-level
// commas and returns the index of its closing '}'.
func braceParts(p []rune, open int) (int, [][]rune, error) {
	depth, start := 0, open+1
	var parts [][]rune
	for i := open; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			if end := classClose(p, i); end > 0 {
				i = end
			}
		case '{':
			depth++
		case ',':
			if depth == 1 {
				parts, start = append(parts, p[start:i]), i+1
			}
		case '}':
			if depth--; depth == 0 {
				return i, append(parts, p[start:i]), nil
			}
		}
	}
	return 0, nil, errBadGlob
}

// classClose returns the index of the ']' closing the class at p[i], or -1;
// a ']' first in the class (after an optional '!') is a member.
func classClose(p []rune, i int) int {
	j := i + 1
	if j < len(p) && p[j] == '!' {
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++
	}
	for ; j < len(p); j++ {
		if p[j] == ']' {
			return j
		}
	}
	return -1
}

// checkClasses rejects a brace-free pattern with an unclosed class or a
// trailing backslash.
func checkClasses(p []rune) error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 == len(p) {
				return errBadGlob
			}
			i++
		case '[':
			if i = classClose(p, i); i < 0 {
				return errBadGlob
			}
		}
	}
	return nil
}

// globMatch matches a brace-free pattern against the whole of s.
func globMatch(p, s []rune) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			if len(p) > 1 && p[1] == '*' {
				rest := p[2:]
				for len(rest) > 0 && rest[0] == '*' {
					rest = rest[1:]
				}
				for i := 0; i <= len(s); i++ {
					if globMatch(rest, s[i:]) {
						return true
					}
				}
				return false
			}
			for i := 0; i <= len(s); i++ {
				if globMatch(p[1:], s[i:]) {
					return true
				}
				if i < len(s) && s[i] == '/' {
					return false
				}
			}
			return false
		case '?':
			if len(s) == 0 || s[0] == '/' {
				return false
			}
		case '[':
			end := classClose(p, 0)
			if len(s) == 0 || !inClass(p[1:end], s[0]) {
				return false
			}
			p = p[end:]
		case '\\':
			p = p[1:]
			fallthrough
		default:
			if len(s) == 0 || s[0] != p[0] {
				return false
			}
		}
		p, s = p[1:], s[1:]
	}
	return len(s) == 0
}

// inClass reports whether c is in the class body (between '[' and ']').
func inClass(body []rune, c rune) bool {
	neg := len(body) > 0 && body[0] == '!'
	if neg {
		body = body[1:]
	}
	in := false
	for i := 0; i < len(body); i++ {
		if i+2 < len(body) && body[i+1] == '-' {
			in = in || body[i] <= c && c <= body[i+2]
			i += 2
			continue
		}
		in = in || body[i] == c
	}
	return in != neg
}
