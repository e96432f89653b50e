package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// escapeText makes a name or message safe to print for people: control
// characters (CR, LF, ESC, ...) and invalid UTF-8 are shown escaped, as Go
// quotes them ("\n", "\x1b", "\xff"), so an object or file name cannot move
// the cursor, erase a line or forge one. Printable text, including any
// language's letters, is left as it is. JSON output needs none of this: its
// encoder escapes on its own.
func escapeText(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case !unicode.IsPrint(r) && r != ' ':
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r == '\\' || (!unicode.IsPrint(r) && r != ' ') {
			return true
		}
	}
	return false
}

// warn prints a warning for people.
func (a *app) warn(msg string) { fmt.Fprintf(a.stderr, "gcsput: warning: %s\n", escapeText(msg)) }

// say writes one line of information on stderr.
func (a *app) say(msg string) { fmt.Fprintf(a.stderr, "gcsput: %s\n", escapeText(msg)) }
