package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/googleapi"

	cliflags "github.com/gcsput/gcsput/internal/cli/flags"
	"github.com/gcsput/gcsput/upload"
)

// The docs' claims about flags and output are checked against the binary's own code,
// beside TestReadmeExamples, which runs their ```sh blocks:
//
//   - TestDocsFlagsExist: every flag a doc gives a gcsput command (in a code block, in
//     `gcsput cp -x` or `cp -x` inline, or in a gcsput column of a table) is one that
//     command's flag set defines. gsutil's and gcloud's flags are named as theirs: in a
//     `gsutil ...`/`gcloud ...` span, or in a table column headed gsutil or gcloud (whose
//     flags must be gcsput's too when gcsput's column says "same").
//   - TestDocsProgressLines: every progress line and summary line drawn in a doc's code
//     block is the line the real code draws for the figures the doc shows.

// docFlagSets is each command's flag set, by every name it goes by ("rsync", "sessions ls").
func docFlagSets(t *testing.T) map[string]*flagSet {
	t.Helper()
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	sets := map[string]*flagSet{}
	for _, c := range commands() {
		fs := newFlagSet("gcsput " + c.name)
		c.setup(a, fs)
		for _, n := range append([]string{c.name}, c.aliases...) {
			sets[n] = fs
		}
	}
	return sets
}

// docCheck is one claim found in a doc: flags given to cmd ("" for any command).
type docCheck struct {
	where string // file:line
	cmd   string
	text  string // the tokens after the command
}

var (
	spanRE      = regexp.MustCompile("`([^`]+)`")
	otherToolRE = regexp.MustCompile(`gsutil|gcloud|sbatch|srun|Slurm|kubectl|fakegcs|gcsbench|go test|curl|openssl`)
	docFlagTok  = regexp.MustCompile(`^--?[A-Za-z][A-Za-z0-9-]*(=.*)?$`)
	shellStopRE = regexp.MustCompile(`^(\||\|\||&&|;|&|#.*|[0-9]?>.*|<.*|\)|\$\(.*)$`)
)

// commandAt finds "gcsput [GLOBALS] CMD rest" (or, with bare, "CMD rest" at the start of s)
// and returns CMD and rest; "" when s names no gcsput command.
func commandAt(s string, sets map[string]*flagSet, bare bool) (cmd, rest string) {
	words := strings.Fields(s)
	start := -1
	for i, w := range words {
		if w == "gcsput" {
			start = i + 1
			break
		}
	}
	if start < 0 {
		if !bare {
			return "", ""
		}
		start = 0
	}
	for start+1 < len(words) && (words[start] == "-u" || words[start] == "--billing-project") {
		start += 2 // gsutil's global -u PROJECT, hoisted behind the command
	}
	for _, n := range []int{2, 1} { // "sessions ls" before "sessions"
		if start+n <= len(words) {
			if name := strings.Join(words[start:start+n], " "); sets[name] != nil {
				return name, strings.Join(words[start+n:], " ")
			}
		}
	}
	return "", ""
}

// unknownFlags returns the flag tokens of args that fs does not define, reading them as
// gcsput's parser does (bundled short booleans, a value after a flag that takes one) and
// stopping at the end of the shell command.
func unknownFlags(fs *flagSet, args string) []string {
	var bad []string
	toks := strings.Fields(args)
	for i := 0; i < len(toks); i++ {
		tok := strings.Trim(toks[i], `'",.:`)
		if shellStopRE.MatchString(toks[i]) || tok == "--" {
			break
		}
		if !docFlagTok.MatchString(tok) {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		fl := fs.fs.Lookup(name)
		switch {
		case name == "help" || name == "version" || name == "h" && fl == nil || gsutilFlagHint(strings.TrimPrefix(fs.fs.Name(), "gcsput "), tok) != "":
			// every command's --help; main's --version; gsutil's -m and -o, which gcsput answers
		case fl != nil:
			if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) {
				i++ // its value
			}
		case cliflags.IsBundle(fs.fs, tok):
		default:
			bad = append(bad, tok)
		}
	}
	return bad
}

// docClaims collects the flag claims of one markdown text. Prose names a flag for a
// command as `gcsput cp -x` or `cp -x`; a bare `-x` in prose has no command and is not
// read (it may be fakegcs's, gcsbench's or Slurm's). A table's gcsput column gives flags
// of the command in its header ("gcsput cp"), or of some command ("gcsput"); a cell that
// says "not supported" or "not taken" names flags gcsput lacks, on purpose.
func docClaims(file, text string, sets map[string]*flagSet) []docCheck {
	var out []docCheck
	fence, lang, prev := false, "", ""
	var cols []string // the header cells of the table being read
	for i, line := range strings.Split(text, "\n") {
		context := prev + " " + line // a sentence may name its tool on the line before
		prev = line
		where := fmt.Sprintf("%s:%d", file, i+1)
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			fence, lang = !fence, strings.TrimPrefix(trim, "```")
			continue
		}
		if fence {
			if m := exitsRE.FindStringSubmatch(trim); lang == "go" || m != nil && m[1] == "2" {
				continue // Go, or a line shown to be refused (a misspelt flag, say)
			}
			if cmd, rest := commandAt(strings.TrimPrefix(trim, "$ "), sets, false); cmd != "" {
				out = append(out, docCheck{where, cmd, rest})
			}
			continue
		}
		if !strings.HasPrefix(trim, "|") {
			cols = nil
			// A bare `--flag` in prose is gcsput's unless its sentence names the tool it is of.
			out = append(out, spanClaims(where, line, "", !otherToolRE.MatchString(context), sets)...)
			continue
		}
		cells := tableCells(trim)
		if cols == nil {
			cols = cells
			continue
		}
		gcs, cmd := -1, ""
		for c, head := range cols {
			if f := strings.Fields(head); len(f) > 0 && f[0] == "gcsput" {
				gcs = c
				if len(f) > 1 {
					cmd = f[1] // "gcsput cp", "gcsput rsync (sync)"
				}
			}
		}
		if gcs < 0 || gcs >= len(cells) {
			for _, cell := range cells {
				out = append(out, spanClaims(where, cell, "", false, sets)...)
			}
			continue
		}
		ours := cells[gcs]
		if strings.Contains(ours, "not supported") || strings.Contains(ours, "not taken") {
			continue
		}
		out = append(out, spanClaims(where, ours, cmd, true, sets)...)
		if strings.HasPrefix(strings.TrimSpace(ours), "same") {
			// "same": gcsput takes gsutil's and gcloud's spellings of this row.
			for c, cell := range cells {
				if c != gcs && c > 0 {
					out = append(out, spanClaims(where, cell, cmd, true, sets)...)
				}
			}
		}
	}
	return out
}

// tableCells splits a table row at the bars outside `code`.
func tableCells(row string) []string {
	var cells []string
	var cur strings.Builder
	code := false
	for _, r := range strings.Trim(row, "|") {
		switch {
		case r == '`':
			code = !code
		case r == '|' && !code:
			cells, cur = append(cells, cur.String()), strings.Builder{}
			continue
		}
		cur.WriteRune(r)
	}
	return append(cells, cur.String())
}

// spanClaims reads the inline code of prose or a table cell: `gcsput cp -x`, `cp -x`,
// and, with bare, `-x` (a flag of cmd, or of some command when cmd is "").
func spanClaims(where, text, cmd string, bare bool, sets map[string]*flagSet) []docCheck {
	var out []docCheck
	for _, m := range spanRE.FindAllStringSubmatch(text, -1) {
		s := m[1]
		if f := strings.Fields(s); len(f) == 0 || f[0] == "gsutil" || f[0] == "gcloud" {
			continue
		}
		if c, rest := commandAt(s, sets, true); c != "" {
			out = append(out, docCheck{where, c, rest})
		} else if bare && strings.HasPrefix(s, "-") && s != "-" && (cmd != "" || strings.HasPrefix(s, "--")) {
			out = append(out, docCheck{where, cmd, s})
		}
	}
	return out
}

// TestDocsFlagsExist fails on a flag a doc gives gcsput that gcsput does not have.
func TestDocsFlagsExist(t *testing.T) {
	t.Parallel()
	root, files := markdownFiles(t)
	sets := docFlagSets(t)
	checked := 0
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range docClaims(f, string(text), sets) {
			checked++
			if fs := sets[c.cmd]; fs != nil {
				for _, bad := range unknownFlags(fs, c.text) {
					t.Errorf("%s: gcsput %s has no flag %s (in %q); fix the doc, or name it as gsutil's or gcloud's", c.where, c.cmd, bad, c.text)
				}
				continue
			}
			for _, tok := range unknownFlags(newFlagSet("none"), c.text) {
				if !anyCommandHas(sets, tok) {
					t.Errorf("%s: no gcsput command has the flag %s; fix the doc, or name it as gsutil's or gcloud's", c.where, tok)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d flag claims found in the docs: is the reader still finding them?", checked)
	}
}

func anyCommandHas(sets map[string]*flagSet, tok string) bool {
	for _, fs := range sets {
		if len(unknownFlags(fs, tok)) == 0 {
			return true
		}
	}
	return false
}

// The reader of claims: what counts as gsutil's, and how flags are read.
func TestDocClaimsReader(t *testing.T) {
	t.Parallel()
	sets := docFlagSets(t)
	md := "Use `gcsput cp --nope x gs://b/` or `cp -rn a b` and `--bwlimit 1MiB/s`, not `--prose-only`.\n" +
		"gsutil's `gsutil cp -D` and `gcloud storage cp --daisy-chain` are theirs, and so is Slurm's\n`--array=3`.\n\n" +
		"| what | gsutil cp | gcloud storage cp | gcsput cp |\n|---|---|---|---|\n" +
		"| a | `-Q` | `--quux` | not supported |\n| b | `-r` | `--recursive`, `--zap` | same |\n| c | – | – | `--skip-unchanged`, `--frob` |\n| d | `-c` | – | the `-c` flag itself is not taken |\n\n" +
		"```console\n$ gcsput sync --delete --max-delete 5 a gs://b/p | tee log   # --not-a-flag\n$ gcsput -u proj ls --bogus gs://b/\n$ gcsput cp --nop a gs://b/   # exits 2: a typo\n```\n"
	var got []string
	for _, c := range docClaims("x.md", md, sets) {
		fs := sets[c.cmd]
		if fs == nil {
			fs = newFlagSet("none")
		}
		for _, bad := range unknownFlags(fs, c.text) {
			if c.cmd != "" || !anyCommandHas(sets, bad) {
				got = append(got, c.where+" "+c.cmd+" "+bad)
			}
		}
	}
	want := "x.md:1 cp --nope|x.md:1  --prose-only|x.md:8 cp --zap|x.md:9 cp --frob|x.md:14 ls --bogus"
	if strings.Join(got, "|") != want {
		t.Errorf("unknown flags found:\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
}

var (
	progressLineRE = regexp.MustCompile(`^(?P<done>[\d.]+ [KMGT]?i?B)(?:/(?P<total>[\d.]+ [KMGT]?i?B))?` +
		`(?: (?P<rate>[\d.]+ [KMGT]?i?B)/s)?(?: ETA (?P<eta>[0-9hms]+))?(?:, (?P<retries>\d+) retr(?:y|ies))?` +
		`(?:, (?P<resumed>\d+) resumed)?(?: (?P<ended>\d+)/(?P<files>\d+) files)? (?P<name>\S+)(?: \(\+(?P<more>\d+)\))?(?P<bar>.*)$`)
	summaryLineRE = regexp.MustCompile(`^(?P<files>\d+) files?: (?P<counts>[^;]*); (?P<bytes>[\d.]+ [KMGT]?i?B) in (?P<secs>[\d.]+)s` +
		`(?: \((?P<rate>[\d.]+ [KMGT]?i?B)/s\))?(?P<rest>.*)$`)
	elapsedRE   = regexp.MustCompile(`\[[0-9hms.]+\] *$`)
	retryLineRE = regexp.MustCompile(`^(?P<name>\S+?)(?: part (?P<part>\d+)/(?P<parts>\d+))?: retry (?P<attempt>\d+)(?:/(?P<max>\d+))? ` +
		`in (?P<wait>[0-9hms.]+): (?P<status>\d{3}) .*$`)
)

// drawRetry is the -v line gcsput prints for a retry after an HTTP status, for the
// figures of a doc's line m (retryLineRE's groups).
func drawRetry(t *testing.T, m map[string]string) string {
	t.Helper()
	n := func(k string) int {
		v, _ := strconv.Atoi(m[k])
		return v
	}
	wait, err := time.ParseDuration(m["wait"])
	if err != nil {
		t.Fatalf("wait %q: %v", m["wait"], err)
	}
	return partRetryLine(m["name"], n("part"), n("parts"), n("attempt"), n("max"), wait, &googleapi.Error{Code: n("status")})
}

// looksLikeProgress says whether a line of a code block draws the progress bar.
func looksLikeProgress(line string) bool {
	return strings.Contains(line, "% |") || strings.Contains(line, " ETA ") || strings.Contains(line, "[==") ||
		strings.Contains(line, "█") || strings.Contains(line, "[=>")
}

// drawProgress is the line the real progress code draws for the figures of a doc's line
// m (progressLineRE's groups), its elapsed time written [E].
func drawProgress(t *testing.T, m map[string]string) string {
	t.Helper()
	num := func(k string) int {
		n, _ := strconv.Atoi(m[k])
		return n
	}
	size := func(k string) int64 {
		if m[k] == "" {
			return 0
		}
		n, err := parseSize(m[k])
		if err != nil {
			t.Fatalf("%s %q: %v", k, m[k], err)
		}
		return n
	}
	b := upload.BatchProgress{BytesDone: size("done"), Bytes: size("total"), Rate: float64(size("rate")),
		Retries: num("retries"), Resumes: num("resumed"), FilesDone: num("ended"), Files: num("files"),
		Current: upload.Progress{Size: 1}}
	if m["eta"] != "" {
		d, err := time.ParseDuration(m["eta"])
		if err != nil {
			t.Fatalf("ETA %q: %v", m["eta"], err)
		}
		b.ETA = d
	}
	var w bytes.Buffer
	p := newProgressEvery(&w, true, 0)
	if m["name"] != "done" {
		p.active[m["name"]] = true
		for i := range num("more") {
			p.active[fmt.Sprintf("~%d", i)] = true // after the doc's name in order
		}
	}
	p.batch(b)
	frames := strings.Split(w.String(), "\r")
	return elapsedRE.ReplaceAllString(strings.TrimRight(frames[len(frames)-1], " "), "[E]")
}

// drawSummary is the summary line the real code prints for a doc's line m.
func drawSummary(t *testing.T, m map[string]string) string {
	t.Helper()
	s := summaryRecord{}
	s.Files, _ = strconv.Atoi(m["files"])
	for _, part := range strings.Split(m["counts"], ", ") {
		n, word, _ := strings.Cut(part, " ")
		v, _ := strconv.Atoi(n)
		for _, f := range []struct {
			word string
			p    *int
		}{{"uploaded", &s.Uploaded}, {"resumed", &s.Resumed}, {"restarted", &s.Restarted}, {"downloaded", &s.Downloaded},
			{"moved", &s.Moved}, {"copied", &s.Copied}, {"skipped", &s.Skipped}, {"deleted", &s.Deleted}, {"failed", &s.Failed},
			{"interrupted", &s.Interrupted}, {"deletes withheld", &s.DeletesWithheld}, {"delete withheld", &s.DeletesWithheld}} {
			if word == f.word {
				*f.p = v
			}
		}
	}
	bytes, _ := parseSize(m["bytes"])
	s.Bytes = bytes
	// The doc shows the time to a tenth: the rate is over the time transfers ran, which is
	// at most the command's, and that may be up to 0.05s more than shown.
	s.Seconds, _ = strconv.ParseFloat(m["secs"], 64)
	s.Seconds += 0.0499
	if rate, _ := parseSize(m["rate"]); rate > 0 {
		s.TransferSeconds = min(float64(bytes)/float64(rate), s.Seconds)
	}
	if m["rest"] != "" {
		if _, tail, ok := strings.Cut(m["rest"], "; "); ok {
			if n, ok := strings.CutSuffix(tail, " not resumable (state not saved)"); ok {
				s.NotResumable, _ = strconv.Atoi(n)
			} else if n, ok := strings.CutSuffix(tail, " transferred"); ok {
				s.Transferred, _ = parseSize(n)
			}
		}
	}
	return summaryLine(s)
}

func groups(re *regexp.Regexp, line string) map[string]string {
	sm := re.FindStringSubmatch(line)
	if sm == nil {
		return nil
	}
	m := map[string]string{}
	for i, n := range re.SubexpNames() {
		m[n] = sm[i]
	}
	return m
}

// checkDrawnLine compares one line of a doc's code block with what gcsput draws; "" when
// the line is neither a progress line nor a summary, or matches.
func checkDrawnLine(t *testing.T, line string) string {
	t.Helper()
	line = strings.TrimRight(line, " ")
	if m := groups(summaryLineRE, line); m != nil {
		if want := drawSummary(t, m); want != line {
			return fmt.Sprintf("the summary\n\t%s\nis drawn by gcsput as\n\t%s", line, want)
		}
		return ""
	}
	if m := groups(retryLineRE, line); m != nil {
		if want := drawRetry(t, m); want != line {
			return fmt.Sprintf("the retry line\n\t%s\nis printed by gcsput -v as\n\t%s", line, want)
		}
		return ""
	}
	if strings.Contains(line, ": retry ") {
		return fmt.Sprintf("the retry line\n\t%s\nis not the shape gcsput -v prints (NAME[ part I/N]: retry A/MAX in WAIT: CAUSE)", line)
	}
	if !looksLikeProgress(line) {
		return ""
	}
	m := groups(progressLineRE, line)
	if m == nil {
		return fmt.Sprintf("the progress line\n\t%s\nis not the shape gcsput draws (DONE/TOTAL RATE/s ETA D, N retries, N resumed N/N files NAME (+N)  P%% |bar| [elapsed])", line)
	}
	want := drawProgress(t, m)
	if got := elapsedRE.ReplaceAllString(line, "[E]"); got != want {
		return fmt.Sprintf("the progress line\n\t%s\nis drawn by gcsput, for those figures, as\n\t%s", line, strings.Replace(want, "[E]", "[elapsed]", 1))
	}
	return ""
}

// TestDocsProgressLines fails on a progress or summary line in a doc that is not the line
// gcsput's own code draws for the figures it shows.
func TestDocsProgressLines(t *testing.T) {
	t.Parallel()
	root, files := markdownFiles(t)
	drawn := 0
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		fence, lang := false, ""
		for i, line := range strings.Split(string(text), "\n") {
			if trim := strings.TrimSpace(line); strings.HasPrefix(trim, "```") {
				fence, lang = !fence, strings.TrimPrefix(trim, "```")
				continue
			}
			if !fence || lang == "go" || lang == "sh" {
				continue
			}
			if looksLikeProgress(line) || summaryLineRE.MatchString(line) || strings.Contains(line, ": retry ") {
				drawn++
			}
			if msg := checkDrawnLine(t, line); msg != "" {
				t.Errorf("%s:%d: %s", f, i+1, msg)
			}
		}
	}
	if drawn < 3 {
		t.Fatalf("only %d drawn lines found in the docs: is the reader still finding them?", drawn)
	}
}

// The comparison itself: a line drawn by the real code passes, a changed one fails.
func TestDocsProgressLineCheck(t *testing.T) {
	t.Parallel()
	var w bytes.Buffer
	p := newProgressEvery(&w, true, 0)
	p.active["photos/img_0001.jpg"], p.active["~x"] = true, true
	p.batch(upload.BatchProgress{Files: 3, Bytes: 9 << 20, BytesDone: 5 << 20, Rate: 2 << 20, ETA: 2 * time.Second,
		Retries: 1, Current: upload.Progress{Size: 1}})
	frames := strings.Split(w.String(), "\r")
	real := frames[len(frames)-1]
	if !strings.Contains(real, "5.0 MiB/9.0 MiB 2.0 MiB/s ETA 2s, 1 retry 0/3 files photos/img_0001.jpg (+1)  55% |") {
		t.Fatalf("drawn %q", real)
	}
	if msg := checkDrawnLine(t, real); msg != "" {
		t.Errorf("the real line fails: %s", msg)
	}
	for _, bad := range []string{
		strings.Replace(real, "55%", "56%", 1),
		strings.Replace(real, "(+1)", "(+1 more)", 1),
		strings.Replace(real, "[0s]", "[0s:2s]", 1),
		"12 files: 9 uploaded, 2 skipped, 1 resumed, 0 failed; 48.0 MiB in 3.2s (15.0 MiB/s)",
		"big.iso part 3/8: retry 1/12 in 1.1s: 503 Service unavailable",
		"big.iso [3/8]: retry 1/12 in 1.1s: 503 Service Unavailable",
	} {
		if checkDrawnLine(t, bad) == "" {
			t.Errorf("accepted %q", bad)
		}
	}
	for _, good := range []string{
		"12 files: 9 uploaded, 1 resumed, 2 skipped, 0 failed; 48.0 MiB in 3.2s (15.0 MiB/s)",
		"big.iso part 3/8: retry 1/12 in 1.1s: 503 Service Unavailable",
		"photos/a.jpg: retry 2/12 in 850ms: 429 Too Many Requests",
	} {
		if msg := checkDrawnLine(t, good); msg != "" {
			t.Error(msg)
		}
	}
}

// unsupportedRE finds a doc's claim that a direction of transfer is not supported:
// "gs:// to gs:// is not supported", "local to gs:// is not supported".
var unsupportedRE = regexp.MustCompile(`(gs://|local) to (gs://|local) is not supported`)

// TestDocsUnsupportedDirections fails on a doc that says a command cannot copy in a
// direction the binary copies in: each claim, on a line of rsync or sync, is run.
func TestDocsUnsupportedDirections(t *testing.T) {
	e := newE2E(t)
	e.write("src/a.txt", 10)
	e.must(nil, "cp", "-r", "src", "gs://bkt/src")
	operand := map[string][2]string{"gs://": {"gs://bkt/src", "gs://bkt/dst"}, "local": {"src", "dst"}}
	root, files := markdownFiles(t)
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			if !strings.Contains(line, "sync") {
				continue
			}
			for _, m := range unsupportedRE.FindAllStringSubmatch(line, -1) {
				src, dst := operand[m[1]][0], operand[m[2]][1]
				if r := e.run(nil, "sync", src, dst); r.code == 0 {
					t.Errorf("%s:%d: says %q, yet 'gcsput sync %s %s' exits 0:\n%s", f, i+1, m[0], src, dst, r.stdout)
				}
			}
		}
	}
}
