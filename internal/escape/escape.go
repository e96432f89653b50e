// Package escape makes text safe to show: names and messages on a terminal, words
// in a command line a user may paste into a shell.
package escape

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text makes a name or message safe to print for people: control characters (CR, LF,
// ESC, ...) and invalid UTF-8 are shown escaped, as Go quotes them ("\n", "\x1b",
// "\xff"), so an object or file name cannot move the cursor, erase a line or forge one.
// Printable text, including any language's letters, is left as it is; a backslash is
// doubled, so an escape shown cannot be told from one in the name. JSON output needs
// none of this: its encoder escapes on its own.
func Text(s string) string {
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

// Shell quotes s for a POSIX shell where it needs quoting, so a command line in a hint
// can be pasted as it is.
func Shell(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellAll quotes each of args for a shell.
func ShellAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = Shell(a)
	}
	return out
}
