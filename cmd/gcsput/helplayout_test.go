package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// helpMaxLines is the most lines a command's --help may take ("about 80": it fits a
// terminal or two, where cp's once took 213 with its flags from line 113).
const helpMaxLines = 90

// helpFlagsBy is the line the first flag heading must come by: usage, a blank line, one or
// two sentences, a blank line, the heading.
const helpFlagsBy = 10

// helpSummaryMax is the longest first usage line of a flag: with the names column
// (2+namesWidth+2) a flag's line fits helpWidth.
const helpSummaryMax = helpWidth - namesWidth - 4

// seeDocRE finds the docs a --help's "See" paragraph names.
var seeDocRE = regexp.MustCompile(`docs/[a-z0-9-]+\.md`)

// Every command's --help is its usage, a sentence or two, its flags under group headings
// (each declared flag on exactly one line, so none is lost), examples, then the docs that say
// the rest, each of which exists.
func TestHelpListsEveryFlagUnderAGroup(t *testing.T) {
	t.Parallel()
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	for _, c := range commands() {
		fs := newFlagSet("gcsput " + c.name)
		c.setup(a, fs)
		r := runCLI(t, "", append(strings.Fields(c.name), "--help")...)
		lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
		if r.code != 0 || len(lines) > helpMaxLines {
			t.Errorf("%s --help: exit %d, %d lines, want at most %d", c.name, r.code, len(lines), helpMaxLines)
		}
		heading, firstHeading, lastFlag, examples, see := "", 0, 0, 0, 0
		for i, l := range lines {
			n := i + 1
			switch {
			case l == "Examples:":
				examples = n
				heading = ""
			case strings.HasPrefix(l, "See "):
				see = n
			case strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") && examples == 0 && n > 1:
				heading = strings.TrimSuffix(l, ":")
				if !slices.Contains(helpGroups, heading) {
					t.Errorf("%s --help line %d: heading %q is not one of helpGroups", c.name, n, l)
				}
				if firstHeading == 0 {
					firstHeading = n
				}
			case strings.HasPrefix(l, "  -") || strings.HasPrefix(l, "      --"):
				if examples == 0 {
					lastFlag = n
					if heading == "" {
						t.Errorf("%s --help line %d: a flag under no heading: %q", c.name, n, l)
					}
				}
			}
		}
		var wide []int // lines that may be wider than helpWidth
		for _, s := range fs.specs {
			var on []int
			for i, l := range lines {
				if l == "  "+s.names() || strings.HasPrefix(l, "  "+s.names()+" ") {
					on = append(on, i+1)
				}
			}
			if len(on) != 1 {
				t.Errorf("%s --help: %q on lines %v, want exactly one", c.name, s.names(), on)
			}
			if len(s.names()) > namesWidth {
				wide = append(wide, on...) // names too long for the column push the line out
			}
			if s.group == "" || !slices.Contains(helpGroups, s.group) {
				t.Errorf("%s: --%s is in group %q, not one of helpGroups: declare it after fs.Group", c.name, s.long, s.group)
			}
			if strings.TrimSpace(s.summary()) == "" || len(s.summary()) > helpSummaryMax {
				t.Errorf("%s: --%s's first usage line is %d characters, want 1 to %d: %q", c.name, s.long, len(s.summary()), helpSummaryMax, s.summary())
			}
		}
		for i, l := range lines[:max(examples-1, 0)] {
			if len(l) > helpWidth && !slices.Contains(wide, i+1) {
				t.Errorf("%s --help line %d is %d characters, want at most %d: %q", c.name, i+1, len(l), helpWidth, l)
			}
		}
		if len(fs.specs) > 0 && (firstHeading == 0 || firstHeading > helpFlagsBy) {
			t.Errorf("%s --help: the flags start on line %d, want by line %d", c.name, firstHeading, helpFlagsBy)
		}
		if examples == 0 || examples < lastFlag || see < examples {
			t.Errorf("%s --help: last flag on line %d, Examples: on line %d, See on line %d: want flags, then examples, then See", c.name, lastFlag, examples, see)
		}
		docs := seeDocRE.FindAllString(strings.Join(lines[max(see-1, 0):], " "), -1)
		if len(docs) == 0 {
			t.Errorf("%s --help names no docs/*.md after See", c.name)
		}
		for _, d := range docs {
			if _, err := os.Stat(filepath.Join("..", "..", d)); err != nil {
				t.Errorf("%s --help names %s: %v", c.name, d, err)
			}
		}
	}
}

// mdEscape keeps Markdown from reading a flag's text as emphasis or escapes ('.*\.tmp$').
var mdEscape = strings.NewReplacer(`\`, `\\`, `*`, `\*`)

// flagsDoc is docs/flags.md as the flag declarations make it: every option of every command
// with its whole description, under the headings of --help. An option whose description
// differs between commands (-r in cp and in rm) has one entry per description.
func flagsDoc() string {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	type entry struct {
		names, text string
		cmds        []string
	}
	byGroup := map[string][]*entry{}
	for _, c := range commands() {
		fs := newFlagSet("gcsput " + c.name)
		c.setup(a, fs)
	spec:
		for _, s := range fs.specs {
			names := strings.TrimSpace(s.names())
			for _, e := range byGroup[s.group] {
				if e.names == names && e.text == s.description() {
					e.cmds = append(e.cmds, c.name)
					continue spec
				}
			}
			byGroup[s.group] = append(byGroup[s.group], &entry{names: names, text: s.description(), cmds: []string{c.name}})
		}
	}
	var b strings.Builder
	b.WriteString(`# Every flag in full

[← README](../README.md)

` + "`gcsput COMMAND --help`" + ` lists a command's flags one a line, under the headings below; this page
gives each its whole description, and the commands that take it. It is made from the flag
declarations: after changing one, run
` + "`GCSPUT_WRITE_FLAGS_DOC=1 go test -run TestFlagsDoc ./cmd/gcsput/`" + ` (TestFlagsDoc fails until then).
`)
	for _, g := range helpGroups {
		if len(byGroup[g]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n", g)
		for _, e := range byGroup[g] {
			fmt.Fprintf(&b, "- `%s` (%s): %s\n", e.names, strings.Join(e.cmds, ", "), mdEscape.Replace(e.text))
		}
	}
	return b.String()
}

// docs/flags.md is what the declarations say, so no flag's description is lost when --help
// shows only its first line.
func TestFlagsDoc(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", "docs", "flags.md")
	want := flagsDoc()
	if os.Getenv("GCSPUT_WRITE_FLAGS_DOC") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Errorf("docs/flags.md is not what the flag declarations make (%v): run GCSPUT_WRITE_FLAGS_DOC=1 go test -run TestFlagsDoc ./cmd/gcsput/", err)
	}
}

// The demo's transfer flags are cp's declarations, not copies of them: each reads as cp's
// in --help and docs/flags.md, under the same heading.
func TestDemoFlagsAreCps(t *testing.T) {
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	specs := func(c *command) map[string]flagSpec {
		fs := newFlagSet("gcsput " + c.name)
		c.setup(a, fs)
		m := map[string]flagSpec{}
		for _, s := range fs.specs {
			m[s.long] = s
		}
		return m
	}
	cp, demo := specs(cpCommand), specs(demoCommand)
	for _, long := range []string{"chunk-size", "progress", "no-progress", "parallel-upload", "parallel-threshold", "component-size"} {
		if d, c := demo[long], cp[long]; d.usage == "" || d.usage != c.usage || d.group != c.group || d.arg != c.arg {
			t.Errorf("demo's --%s is %+v; cp's %+v", long, d, c)
		}
	}
}
