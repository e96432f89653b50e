package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// gs://b/p names the object p or the folder p/, as in gsutil: not photos/ or pq.
func TestLsNameIsObjectOrFolder(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	for _, name := range []string{"p", "p/x", "p/sub/z", "photos/y", "pq"} {
		if _, err := srv.PutObject("bkt", name, []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"gs://bkt/p"}, 0, "gs://bkt/p\ngs://bkt/p/x\ngs://bkt/p/sub/\n"},
		{[]string{"-r", "gs://bkt/p"}, 0, "gs://bkt/p\ngs://bkt/p/sub/z\ngs://bkt/p/x\n"},
		{[]string{"gs://bkt/photos"}, 0, "gs://bkt/photos/y\n"},
		{[]string{"gs://bkt/pq"}, 0, "gs://bkt/pq\n"},
		{[]string{"gs://bkt/p/"}, 0, "gs://bkt/p/x\ngs://bkt/p/sub/\n"},
		{[]string{"gs://bkt/ph"}, 1, ""},
	} {
		r := runIn(context.Background(), false, append([]string{"ls", "--endpoint", srv.URL()}, tc.args...)...)
		if r.code != tc.code || r.stdout != tc.want {
			t.Errorf("ls %v: exit %d, stdout %q, want %d, %q\n%s", tc.args, r.code, r.stdout, tc.code, tc.want, r.stderr)
		}
		if tc.code == 1 && !strings.Contains(r.stderr, "gs://bkt/ph: no objects match") {
			t.Errorf("ls %v: stderr %q", tc.args, r.stderr)
		}
	}
}

// closedPipe is stdout whose reader (head -1) is gone after the first line.
type closedPipe struct {
	syncBuffer
	lines int
}

func (p *closedPipe) Write(b []byte) (int, error) {
	if p.lines >= 1 {
		return 0, syscall.EPIPE
	}
	p.lines += strings.Count(string(b), "\n")
	return p.syncBuffer.Write(b)
}

// ls prints a listing page by page: with stdout closed after the first line, only the
// first page is asked for, and ls stops quietly (exit 0, nothing on stderr). Read whole,
// the output's order and -l's total are those of the whole listing.
func TestLsStreamsAndStopsAtClosedStdout(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	var names []string
	total := 0
	for i := range 2500 { // three pages of 1,000
		name := fmt.Sprintf("d/%d/o%04d", i%7, i)
		names = append(names, "gs://bkt/"+name)
		total += len(name)
		if _, err := srv.PutObject("bkt", name, []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(names)
	for _, args := range [][]string{{"-r", "gs://bkt/d/"}, {"-r", "-l", "gs://bkt/d/"}, {"-r", "--json", "gs://bkt/d/"}, {"gs://bkt/d/**"}} {
		srv.ResetStats()
		out := &closedPipe{}
		var errb syncBuffer
		a := &app{stdin: strings.NewReader(""), stdout: out, stderr: &errb, isTerminal: func(io.Writer) bool { return false }}
		code := a.run(context.Background(), append([]string{"ls", "--endpoint", srv.URL()}, args...))
		if code != 0 || errb.String() != "" || out.lines != 1 {
			t.Errorf("ls %v into a closed pipe: exit %d, %d lines, stderr %q; want 0, 1 line, nothing", args, code, out.lines, errb.String())
		}
		if n := srv.Count("storage.objects.list"); n != 1 {
			t.Errorf("ls %v into a closed pipe: %d list requests, want 1 (the first page only)", args, n)
		}
	}
	r := runIn(context.Background(), false, "ls", "-r", "--endpoint", srv.URL(), "gs://bkt/d/")
	if r.code != 0 || r.stdout != strings.Join(names, "\n")+"\n" {
		t.Errorf("ls -r: exit %d, %d bytes of output, not the 2500 names in order\n%s", r.code, len(r.stdout), r.stderr)
	}
	r = runIn(context.Background(), false, "ls", "-r", "-l", "--endpoint", srv.URL(), "gs://bkt/d/")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	want := fmt.Sprintf("TOTAL: 2500 objects, %d bytes (%s)", total, gsutilSize(int64(total)))
	if r.code != 0 || len(lines) != 2501 || lines[2500] != want || !strings.HasSuffix(lines[0], "  "+names[0]) {
		t.Errorf("ls -r -l: exit %d, %d lines, last %q, want %q\n%s", r.code, len(lines), lines[len(lines)-1], want, r.stderr)
	}
}

// A server that repeats its page token ends ls -r and rm -r with an error (exit 1), not a
// listing that runs forever.
func TestListersEndOnRepeatedPageToken(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	for i := range 3 {
		if _, err := srv.PutObject("bkt", fmt.Sprintf("d/o%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Kind: fakegcs.KindRepeatPageToken, Times: -1})
	for _, args := range [][]string{{"ls", "-r"}, {"rm", "-r"}, {"du"}} {
		r := runIn(context.Background(), false, append(append(args, "--endpoint", srv.URL()), "gs://bkt/d/")...)
		want := "the listing makes no progress: the server gave the same page token twice (after 2 pages); gcsput stops a listing that makes no progress"
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", args, r.code, r.stderr, want)
		}
	}
	if names, err := srv.ObjectNames("bkt"); err != nil || len(names) != 3 {
		t.Errorf("objects after rm -r failed to list: %v, %v", names, err)
	}
}

// A metadata answer of 100 MiB: stat reads 32 MiB of it at most and fails naming the bound.
func TestStatBoundsTheAnswer(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	if _, err := srv.PutObject("bkt", "x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindHugeBody, AfterBytes: 100 << 20})
	r := runIn(context.Background(), false, "stat", "--endpoint", srv.URL(), "gs://bkt/x")
	want := "the answer to GET /storage/v1/b/bkt/o/x is longer than 32 MiB, the most gcsput reads of one JSON answer"
	if r.code != 1 || !strings.Contains(r.stderr, want) || r.stdout != "" {
		t.Errorf("stat: exit %d, stdout %q, stderr %q; want 1 and %q", r.code, r.stdout, r.stderr, want)
	}
}

// The built binary, as a shell runs 'gcsput ls -r gs://bkt/d/ | head -1': the reader closes
// after one line; gcsput (SIGPIPE ignored) meets EPIPE, stops listing and exits 0 with
// nothing on stderr, having asked for no more pages than the pipe's buffer let it print.
func TestE2ELsIntoHead(t *testing.T) {
	e := newE2E(t)
	pad := strings.Repeat("x", 40) // a page prints 57 KB: a pipe (64 KiB) holds little more than one
	for i := range 5000 {          // five pages of 1,000
		if _, err := e.srv.PutObject("bkt", fmt.Sprintf("d/%05d-%s", i, pad), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	cmd, _, errb := e.command(nil, "ls", "-r", "gs://bkt/d/")
	cmd.Stdout = nil
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	out.Close()
	werr := cmd.Wait()
	if line != "gs://bkt/d/00000-"+pad+"\n" || err != nil {
		t.Errorf("first line %q, %v", line, err)
	}
	if werr != nil || errb.String() != "" {
		t.Errorf("ls -r | head -1: %v, stderr %q; want exit 0 and nothing", werr, errb.String())
	}
	if n := e.srv.Count("storage.objects.list"); n > 3 {
		t.Errorf("%d of 5 pages asked for: want no more than the pipe's buffer took (3)", n)
	}
}
