package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/gcsput/gcsput/fakegcs"
)

// The README's and docs' shell examples are tests: TestReadmeExamples runs every
// ```sh block of README.md and docs/*.md, as written, through the built gcsput,
// against an in-process fakegcs. The conventions it holds the markdown to:
//
//   - A block runs unless the line before its fence is `<!-- not run: REASON -->`
//     (a cron script, gcloud, a benchmark of minutes, a server that runs until
//     stopped). The reason is shown to the reader and is required.
//   - The blocks of one file run in order, in one scratch directory with one state
//     directory and one fakegcs holding the bucket my-bucket, as a reader following
//     the file in one terminal would. Each block is its own bash process.
//   - fakegcs is at 127.0.0.1:4443 in the docs (`go run ./cmd/fakegcs -addr
//     127.0.0.1:4443 -bucket my-bucket`); the test puts its own port in its place.
//   - Each command line (a line, or lines joined by a trailing `\`) must exit 0, or
//     the code its trailing comment names: `# exits 2`.
//   - Runnable examples name only gs://my-bucket, the bucket the test creates.

// exampleAddr is where the docs say fakegcs listens.
const exampleAddr = "127.0.0.1:4443"

// shBlock is one fenced ```sh block of a markdown file.
type shBlock struct {
	file    string
	line    int    // 1-based line of the opening fence
	skip    string // the not-run reason; "" runs the block
	lines   []string
	lineNos []int // the markdown line of each entry of lines
}

var (
	notRunRE  = regexp.MustCompile(`^<!--\s*not run:\s*(.*?)\s*-->$`)
	notRunAny = regexp.MustCompile(`^<!--\s*not run`)
	exitsRE   = regexp.MustCompile(`#.*\bexits (\d+)\b`)
	bucketRE  = regexp.MustCompile(`gs://([^/\s"'*?]*)`)
)

// shBlocks returns the ```sh blocks of a markdown text, with their not-run marks.
func shBlocks(file, text string) ([]shBlock, error) {
	var blocks []shBlock
	var cur *shBlock
	prev := ""
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case cur != nil && strings.HasPrefix(line, "```"):
			blocks, cur = append(blocks, *cur), nil
		case cur != nil:
			cur.lines, cur.lineNos = append(cur.lines, line), append(cur.lineNos, i+1)
		case line == "```sh":
			cur = &shBlock{file: file, line: i + 1}
			if m := notRunRE.FindStringSubmatch(prev); m != nil {
				if m[1] == "" {
					return nil, fmt.Errorf("%s:%d: a not-run mark must say why: <!-- not run: REASON -->", file, i)
				}
				cur.skip = m[1]
			} else if notRunAny.MatchString(prev) {
				return nil, fmt.Errorf("%s:%d: malformed mark %q; write <!-- not run: REASON -->", file, i, prev)
			}
		}
		if line != "" {
			prev = line
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: ```sh block never closed", file, cur.line)
	}
	return blocks, nil
}

// shCommand is one command line of a block: continuation lines joined.
type shCommand struct {
	text   string
	line   int // markdown line where it starts
	expect int // the exit code its comment promises (0 unless "# exits N")
}

// commands splits a block into command lines, skipping blanks and comments.
func (b shBlock) commands() []shCommand {
	var cmds []shCommand
	var cur *shCommand
	for i, l := range b.lines {
		if cur == nil {
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			cur = &shCommand{line: b.lineNos[i]}
		}
		if cont, ok := strings.CutSuffix(l, `\`); ok {
			cur.text += strings.TrimSpace(cont) + " "
			continue
		}
		cur.text += l
		if m := exitsRE.FindStringSubmatch(l); m != nil {
			cur.expect, _ = strconv.Atoi(m[1])
		}
		cmds, cur = append(cmds, *cur), nil
	}
	return cmds
}

// script is the bash text that runs a block's commands one by one and stops at the
// first whose exit code is not the one promised, naming its markdown line.
func (b shBlock) script(addr string) string {
	var s strings.Builder
	s.WriteString("set -o pipefail\n")
	for _, c := range b.commands() {
		fmt.Fprintf(&s, "%s\n__rc=$?; if [ $__rc -ne %d ]; then echo \"@@failed %d $__rc\" >&2; exit 97; fi\n",
			strings.ReplaceAll(c.text, exampleAddr, addr), c.expect, c.line)
	}
	return s.String()
}

// checkBuckets refuses a runnable block that names a bucket the test does not create,
// or that could reach Google: tests talk only to 127.0.0.1.
func (b shBlock) checkBuckets() error {
	for _, c := range b.commands() {
		if strings.Contains(c.text, "googleapis.com") || strings.Contains(c.text, "unset STORAGE_EMULATOR_HOST") {
			return fmt.Errorf("%s:%d: a runnable example must not reach Google; mark the block <!-- not run: REASON -->", b.file, c.line)
		}
		for _, m := range bucketRE.FindAllStringSubmatch(c.text, -1) {
			if m[1] != "my-bucket" {
				return fmt.Errorf("%s:%d: runnable examples use gs://my-bucket (the bucket the test creates), not gs://%s; "+
					"or mark the block <!-- not run: REASON -->", b.file, c.line, m[1])
			}
		}
	}
	return nil
}

// markdownFiles are the files whose examples run: README.md and docs/*.md.
func markdownFiles(t *testing.T) (root string, files []string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = []string{"README.md"}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	return root, files
}

func TestReadmeExamples(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	root, files := markdownFiles(t)
	for _, f := range files {
		t.Run(strings.ReplaceAll(f, "/", "_"), func(t *testing.T) {
			t.Parallel()
			text, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := shBlocks(f, string(text))
			if err != nil {
				t.Fatal(err)
			}
			ran, cmds := runExampleBlocks(t, blocks)
			t.Logf("%s: ran %d of %d sh blocks (%d commands), skipped %d", f, ran, len(blocks), cmds, len(blocks)-ran)
			if f == "README.md" && cmds == 0 {
				t.Fatal("README.md: no gcsput example ran; are its examples still ```sh blocks?")
			}
		})
	}
}

// runExampleBlocks runs a file's blocks in order in one scratch world, and returns
// how many blocks and commands ran. The first failing block fails the test: the
// blocks after it would only fail for its sake.
func runExampleBlocks(t *testing.T, blocks []shBlock) (ran, cmds int) {
	t.Helper()
	dir := t.TempDir()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"my-bucket"}})
	env := []string{
		"PATH=" + filepath.Dir(gcsputBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + dir, "XDG_STATE_HOME=" + filepath.Join(dir, ".state"),
		"STORAGE_EMULATOR_HOST=" + srv.Host(), "LC_ALL=C",
	}
	for _, b := range blocks {
		if b.skip != "" {
			t.Logf("%s:%d: not run: %s", b.file, b.line, b.skip)
			continue
		}
		if err := b.checkBuckets(); err != nil {
			t.Fatal(err)
		}
		runExampleBlock(t, b, dir, env, srv.Host())
		ran, cmds = ran+1, cmds+len(b.commands())
	}
	return ran, cmds
}

// runExampleBlock runs one block under bash and fails the test with the block and
// the failing line when a command's exit code is not the one written.
func runExampleBlock(t *testing.T, b shBlock, dir string, env []string, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", b.script(addr))
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, 5*time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("%s:%d: the ```sh block failed: %v", b.file, b.line, err)
	if m := regexp.MustCompile(`@@failed (\d+) (\d+)`).FindStringSubmatch(out.String()); m != nil {
		line, _ := strconv.Atoi(m[1])
		for _, c := range b.commands() {
			if c.line == line {
				msg = fmt.Sprintf("%s:%d: %s\nexited %s, want %d", b.file, line, c.text, m[2], c.expect)
			}
		}
	}
	t.Fatalf("%s\nblock at %s:%d:\n%s\noutput:\n%s", msg, b.file, b.line, strings.Join(b.lines, "\n"), out.String())
}

// The conventions themselves: marks, continuation lines and promised exit codes are
// read as the comment at the top of this file says.
func TestReadmeExampleParsing(t *testing.T) {
	md := "intro\n\n<!-- not run: needs a real bucket -->\n```sh\ngcsput ls gs://real/\n```\n\n" +
		"```sh\n# a comment\ngcsput sync --delete \\\n  empty gs://my-bucket/b   # exits 2: refused\necho ok\n```\n"
	blocks, err := shBlocks("x.md", md)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0].skip != "needs a real bucket" || blocks[1].skip != "" {
		t.Fatalf("blocks = %+v", blocks)
	}
	got := blocks[1].commands()
	want := []shCommand{
		{text: "gcsput sync --delete empty gs://my-bucket/b   # exits 2: refused", line: 10, expect: 2},
		{text: "echo ok", line: 12},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("commands = %+v, want %+v", got, want)
	}
	if err := blocks[0].checkBuckets(); err == nil || !strings.Contains(err.Error(), "x.md:5: runnable examples use gs://my-bucket") {
		t.Errorf("checkBuckets(gs://real) = %v", err)
	}
	google := shBlock{file: "z.md", lines: []string{"gcsput ls --endpoint https://storage.googleapis.com gs://my-bucket/"}, lineNos: []int{7}}
	if err := google.checkBuckets(); err == nil || !strings.Contains(err.Error(), "z.md:7: a runnable example must not reach Google") {
		t.Errorf("checkBuckets(googleapis.com) = %v", err)
	}
	for h, want := range map[string]string{
		"## Objects stored gzip-compressed (`-z`, `-Z`)": "objects-stored-gzip-compressed--z--z",
		"### The wire: TLS, HTTP/2 and a round trip":     "the-wire-tls-http2-and-a-round-trip",
		"#!/bin/sh": "",
	} {
		if got := strings.Join(headingSlugs(h), ","); got != want {
			t.Errorf("headingSlugs(%q) = %q, want %q", h, got, want)
		}
	}
	for _, bad := range []string{"<!-- not run: -->\n```sh\nls\n```\n", "<!-- not run -->\n```sh\nls\n```\n", "```sh\nls\n"} {
		if _, err := shBlocks("y.md", bad); err == nil {
			t.Errorf("shBlocks(%q) accepted it", bad)
		}
	}
}

// TestReadmeLinks checks every relative link of README.md and docs/*.md: the file
// exists, and an anchor names a heading of it (GitHub's slugs), so moving a section
// cannot leave a link behind.
func TestReadmeLinks(t *testing.T) {
	t.Parallel()
	root, files := markdownFiles(t)
	linkRE := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				if err := checkLink(root, f, m[1]); err != nil {
					t.Errorf("%s:%d: link %s: %v", f, i+1, m[1], err)
				}
			}
		}
	}
}

// checkLink resolves a link of file f (relative to root) and checks its anchor.
func checkLink(root, f, link string) error {
	if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
		return nil
	}
	target, anchor, _ := strings.Cut(link, "#")
	path := filepath.Join(root, f)
	if target != "" {
		path = filepath.Join(root, filepath.Dir(f), target)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if anchor == "" || !strings.HasSuffix(path, ".md") {
		return nil
	}
	for _, h := range headingSlugs(string(text)) {
		if h == anchor {
			return nil
		}
	}
	return fmt.Errorf("no heading of %s has the anchor #%s", filepath.Base(path), anchor)
}

// headingSlugs are the anchors GitHub gives a file's headings: lower case, punctuation
// other than '-' and '_' dropped, spaces made '-'. (Repeated headings, which get
// -1, -2 suffixes, are not used by these docs.)
func headingSlugs(text string) []string {
	var slugs []string
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if fence || !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slugs = append(slugs, b.String())
	}
	return slugs
}
