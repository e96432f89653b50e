package glob

import "strings"

// MatchGlob returns a glob for the JSON API's matchGlob parameter whose
// matches include every name the pattern matches, and false when that syntax
// cannot say it. The server narrows the listing; the caller still matches
// each name it returns with [Pattern.Match], so the answer never depends on
// the server's reading of the corners (a server that ignores matchGlob, or an
// emulator that reads it differently, costs requests, not correctness).
//
// Only [Wildcard] patterns are translated. matchGlob reads "{", "}" and "\"
// as syntax, where a Wildcard pattern means the characters themselves, so a
// pattern holding them (and an unclosed "[") is filtered on the client alone.
// "a/**/b", which also matches "a/b" here, is sent as "a/**b".
func (p *Pattern) MatchGlob() (string, bool) {
	if p.syntax != Wildcard || strings.ContainsAny(p.text, `{}\`) {
		return "", false
	}
	var g strings.Builder
	text := p.text
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '*':
			j := i
			for j < len(text) && text[j] == '*' {
				j++
			}
			if j-i == 1 {
				g.WriteByte('*')
				continue
			}
			g.WriteString("**")
			whole := isSegmentStart(text, i) && j < len(text) && text[j] == '/'
			i = j - 1
			if whole {
				i = j // the '/' after a whole-segment "**" is optional there: drop it
			}
		case '[':
			end := classEnd(text, i)
			if end < 0 {
				return "", false // a literal '[' here; matchGlob would read a class
			}
			body := text[i+1 : end]
			if strings.HasPrefix(strings.TrimLeft(body, "!^"), "]") {
				return "", false // a leading ']' member: left to the client
			}
			if body[0] == '^' {
				body = "!" + body[1:]
			}
			g.WriteString("[" + body + "]")
			i = end
		default:
			g.WriteByte(c)
		}
	}
	return g.String(), true
}

// isSegmentStart reports whether text[i] starts a "/"-separated segment.
func isSegmentStart(text string, i int) bool { return i == 0 || text[i-1] == '/' }

// MatchGlobOrUnder is [Pattern.MatchGlob] widened to the names under a
// match, for a listing with delimiter "/" that must also find the folders
// whose names match (gs://b/docs/* lists the folder docs/old/). It is for
// [Pattern.OneSegment] patterns.
func (p *Pattern) MatchGlobOrUnder() (string, bool) {
	g, ok := p.MatchGlob()
	if !ok {
		return "", false
	}
	if strings.HasSuffix(g, "*") {
		return g + "*", true
	}
	return g + "**", true
}
