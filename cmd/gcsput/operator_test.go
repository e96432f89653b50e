package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Operator mistakes played end to end against the built binary.

// report is given shards 0 and 1 of one job and shard 2 of another job with
// the same N (another tree): it refuses, names the odd file, and counts this
// job's shard 2 as missing. With this job's own shard 2 it passes. A sync
// whose filters differ is another job too.
func TestOperatorReportRefusesAnotherJobsShard(t *testing.T) {
	e := newE2E(t)
	for i := range 30 {
		e.write(fmt.Sprintf("tree/f%02d", i), 10+i)
		e.write(fmt.Sprintf("other/f%02d", i), 20+i)
	}
	out := func(name string, args ...string) string {
		r := e.must(nil, append(args, "--json", "--state-dir", e.state)...)
		p := filepath.Join(e.dir, name)
		if err := os.WriteFile(p, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s0 := out("s0.ndjson", "cp", "-r", "--shard", "0/3", "tree", "gs://bkt/a/")
	s1 := out("s1.ndjson", "cp", "-r", "--shard", "1/3", "tree", "gs://bkt/a/")
	odd := out("s2.ndjson", "cp", "-r", "--shard", "2/3", "other", "gs://bkt/a/")
	r := e.run(nil, "report", s0, s1, odd)
	if r.code != 1 || !strings.Contains(r.stderr, odd+" is not an output of this job: it names cp "+filepath.Join(e.dir, "other")) ||
		!strings.Contains(r.stderr, "the other 2 name cp "+filepath.Join(e.dir, "tree")+" -> gs://bkt/a/, 3 shards") ||
		!strings.Contains(r.stderr, "shard 2/3 is missing") || strings.Contains(r.stdout, "all done") {
		t.Errorf("another job's shard 2: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	s2 := out("s2ok.ndjson", "cp", "-r", "--shard", "2/3", "tree", "gs://bkt/a/")
	r = e.must(nil, "report", s0, s1, s2)
	if !strings.Contains(r.stdout, "job cp "+filepath.Join(e.dir, "tree")+" -> gs://bkt/a/, 3 shards (id ") ||
		!strings.Contains(r.stdout, "3 outputs: 30 files: 30 uploaded") {
		t.Errorf("this job's three shards: %q", r.stdout)
	}
	// An output that names no job (resume's, or an older gcsput's) cannot
	// be told to be this job's: it is refused too.
	b, _ := os.ReadFile(s2)
	nameless := filepath.Join(e.dir, "s2nameless.ndjson")
	os.WriteFile(nameless, regexp.MustCompile(`"job":\{[^}]*\},`).ReplaceAll(b, nil), 0o644)
	r = e.run(nil, "report", s0, s1, nameless)
	if r.code != 1 || !strings.Contains(r.stderr, nameless+" is not an output of this job: it names no job (an output of 'gcsput resume'") {
		t.Errorf("an output naming no job: exit %d, %q", r.code, r.stderr)
	}
	// The same tree, destination and split, but other filters: another job.
	y0 := out("y0.ndjson", "sync", "--shard", "0/2", "tree", "gs://bkt/y")
	y1 := out("y1.ndjson", "sync", "--shard", "1/2", "--exclude", "f1*", "tree", "gs://bkt/y")
	r = e.run(nil, "report", y0, y1)
	if r.code != 1 || !strings.Contains(r.stderr, y1+" is not an output of this job") || !strings.Contains(r.stderr, "--exclude f1*") {
		t.Errorf("another filter: exit %d, %q", r.code, r.stderr)
	}
}

// The job's id is what report's help documents: the first 16 hex digits of
// the SHA-256 of ["gcsput-job/1", command, sources, destination, N, filters].
func TestOperatorJobIDIsDocumented(t *testing.T) {
	e := newE2E(t)
	e.write("tree/a", 5)
	r := e.must(nil, "sync", "--json", "--shard", "0/2", "--include", "*.go", "--exclude", "x", "tree/", "gs://bkt/p")
	_, sum := jsonLines(t, r.stdout)
	src := filepath.Join(e.dir, "tree") + "/"
	b, _ := json.Marshal([]any{"gcsput-job/1", "sync", []string{src}, "gs://bkt/p", 2, []string{"include *.go", "exclude x"}})
	h := sha256.Sum256(b)
	want := jobIdentity{ID: hex.EncodeToString(h[:8]), Command: "sync", Sources: []string{src}, SourceCount: 1,
		Destination: "gs://bkt/p", Shards: 2, Filters: []string{"include *.go", "exclude x"}}
	if sum.Job == nil || fmt.Sprint(*sum.Job) != fmt.Sprint(want) {
		t.Errorf("summary job %+v, want %+v", sum.Job, want)
	}
}
