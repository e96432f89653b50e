package main

import (
	"fmt"

	"github.com/gcsput/gcsput/internal/escape"
)

// escapeText makes a name or message safe to print for people (escape.Text): a name
// cannot move the cursor, erase a line or forge one.
var escapeText = escape.Text

// warn prints a warning for people.
func (a *app) warn(msg string) { fmt.Fprintf(a.stderr, "gcsput: warning: %s\n", escapeText(msg)) }

// say writes one line of information on stderr.
func (a *app) say(msg string) { fmt.Fprintf(a.stderr, "gcsput: %s\n", escapeText(msg)) }
