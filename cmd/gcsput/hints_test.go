package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

var (
	hintQuotedRE = regexp.MustCompile(`'(gcsput [^']+|--[a-z][a-z-]*(?: [^' -][^']*)?)'`)
	hintFlagRE   = regexp.MustCompile(`(?:^|[\s(])(--[a-z][a-z-]*)\b`)
)

// hintedRuns are the command lines a hint tells the user to run: each quoted
// 'gcsput ...' as written; the command it answers (again) with each quoted
// '--flag value' added; and, when the hint says to run the same command again, that
// command with each bare --flag it mentions added.
func hintedRuns(hint string, again []string) [][]string {
	var runs [][]string
	with := func(flags ...string) []string {
		return append(append([]string{again[0]}, flags...), again[1:]...)
	}
	for _, m := range hintQuotedRE.FindAllStringSubmatch(hint, -1) {
		if rest, ok := strings.CutPrefix(m[1], "gcsput "); ok {
			runs = append(runs, strings.Fields(rest))
		} else {
			runs = append(runs, with(strings.Fields(m[1])...))
		}
	}
	if strings.Contains(hint, "same command again") {
		var flags []string
		for _, m := range hintFlagRE.FindAllStringSubmatch(hintQuotedRE.ReplaceAllString(hint, ""), -1) {
			flags = append(flags, m[1])
		}
		runs = append(runs, with(flags...))
	}
	return runs
}

// Every interrupt hint names a command that works: each command of a job is interrupted
// (its first file's upload stalls, -j 1 leaves the second unstarted), and every command
// line its hint names is then run and must not be refused as a usage error. sync's hint
// said to add --skip-unchanged, a flag sync refuses.
func TestInterruptHintsNameWorkingCommands(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"cp", "sync", "rsync", "mv"} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancelCause(context.Background())
			srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Faults: []fakegcs.Fault{
				{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(2 << 20)), Kind: fakegcs.KindStall, Delay: time.Hour},
			}, Logf: func(format string, args ...any) {
				if strings.Contains(fmt.Sprintf(format, args...), "injecting stall") {
					cancel(errInterrupted)
				}
			}})
			dir := t.TempDir()
			src := filepath.Join(dir, "src")
			writeFile(t, filepath.Join(src, "a.bin"), 9<<20) // past the 8 MiB of single-request uploads
			writeFile(t, filepath.Join(src, "b.bin"), 9<<20)
			common := []string{"--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"), "-j", "1", "--chunk-size", "1MiB"}
			var args []string
			switch cmd {
			case "cp", "mv":
				args = []string{cmd, "-r", src, "gs://bkt/p/"}
			default:
				args = []string{cmd, src, "gs://bkt/p"}
			}
			args = append(args, common...)
			r := runIn(ctx, false, args...)
			_, hint, ok := strings.Cut(r.stderr, "gcsput: interrupted; ")
			if r.code != exitInterrupted || !ok {
				t.Fatalf("gcsput %q: exit %d, stderr:\n%s\nwant an interrupt with a hint", args, r.code, r.stderr)
			}
			runs := hintedRuns(hint, args)
			if len(runs) == 0 {
				t.Fatalf("the hint names no command:\n%s", hint)
			}
			for _, run := range runs {
				if run[0] == "resume" || run[0] == "sessions" {
					run = append(run, "--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"))
				}
				if rr := runIn(context.Background(), false, run...); rr.code == exitUsage {
					t.Errorf("the hint\n%s\nnames 'gcsput %s', which is refused:\n%s", hint, strings.Join(run, " "), rr.stderr)
				}
			}
		})
	}
}

// Every failure hint that names a command or a flag names one that works: rm's "use -r",
// sync's delete guard ('--max-delete N', '--dry-run', 'gcsput rm -r DST'). Each hinted
// command line is run and must not be refused as a usage error.
func TestFailureHintsNameWorkingCommands(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	common := []string{"--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state")}
	up := filepath.Join(dir, "up")
	writeFile(t, filepath.Join(up, "rm1", "a"), 10)
	writeFile(t, filepath.Join(up, "rm2", "a"), 10)
	for i := range 30 { // past the guard's floor of 10 deletes
		for _, d := range []string{"many", "other", "gone"} {
			writeFile(t, filepath.Join(up, d, fmt.Sprintf("f%d", i)), 10)
		}
	}
	if r := runIn(context.Background(), false, append([]string{"cp", "-r", up, "gs://bkt/"}, common...)...); r.code != 0 {
		t.Fatalf("cp -r: %+v", r)
	}
	one := filepath.Join(dir, "one")
	writeFile(t, filepath.Join(one, "f0"), 10)
	unrelated := filepath.Join(dir, "unrelated")
	writeFile(t, filepath.Join(unrelated, "x"), 10)
	empty := filepath.Join(dir, "empty")
	writeFile(t, filepath.Join(empty, ".keep"), 0)
	for _, args := range [][]string{
		{"rm", "gs://bkt/up/rm1/"},
		{"rm", "gs://bkt/up/rm2"},
		{"sync", "--delete", one, "gs://bkt/up/many"},
		{"sync", "--delete", unrelated, "gs://bkt/up/other"},
		{"sync", "--delete", "--exclude", ".keep", empty, "gs://bkt/up/gone"},
	} {
		args = append(args, common...)
		r := runIn(context.Background(), false, args...)
		runs := hintedRuns(r.stderr, args)
		if r.code == 0 || len(runs) == 0 {
			t.Errorf("gcsput %q: exit %d, stderr:\n%s\nwant a failure whose message names a command", args, r.code, r.stderr)
			continue
		}
		for _, run := range runs {
			if run[0] != args[0] {
				run = append(run, "--endpoint", srv.URL())
			}
			rr := runIn(context.Background(), false, run...)
			if slices.Contains(run, "--dry-run") && strings.HasPrefix(rr.stderr, "dry run: ") {
				continue // a dry run's exit code is the refusal it foresees
			}
			if rr.code == exitUsage {
				t.Errorf("the message\n%s\nnames 'gcsput %s', which is refused:\n%s", r.stderr, strings.Join(run, " "), rr.stderr)
			}
		}
	}
}
