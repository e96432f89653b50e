package main

import (
	"strings"
	"testing"
)

// Every group and command has help: a group with --help (or 'help GROUP')
// lists its commands on stdout, exit 0; version --help too.
func TestGroupAndVersionHelp(t *testing.T) {
	for _, args := range [][]string{{"sessions", "--help"}, {"meta", "--help"}, {"help", "sessions"}, {"sessions", "-h"}} {
		r := runCLI(t, "", args...)
		group := args[0]
		if group == "help" {
			group = args[1]
		}
		if r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: gcsput "+group+" COMMAND") || !strings.Contains(r.stdout, "  "+group+" ") {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := runCLI(t, "", "sessions", "--help"); !strings.Contains(r.stdout, "sessions ls") || !strings.Contains(r.stdout, "sessions gc") {
		t.Errorf("sessions help lacks its commands:\n%s", r.stdout)
	}
	if r := runCLI(t, "", "version", "--help"); r.code != 0 || !strings.Contains(r.stdout, "Usage: gcsput version") {
		t.Errorf("version --help: exit %d, %q", r.code, r.stdout)
	}
	r := runCLI(t, "", "sessions")
	wantUsage(t, r, `"sessions" needs a subcommand: ls, cancel, gc`)
}
