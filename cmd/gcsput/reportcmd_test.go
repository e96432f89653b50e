package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestReportMergesShards(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	file := `{"type":"file","status":"uploaded","shard":"%s"}` + "\n"
	sum := func(shard string, uploaded, failed int) string {
		return strings.Replace(file, "%s", shard, 1) +
			`{"type":"summary","shard":"` + shard + `","files":` + itoa(uploaded+failed) + `,"uploaded":` + itoa(uploaded) +
			`,"failed":` + itoa(failed) + `,"bytes":100,"seconds":2}` + "\n"
	}
	a := write("a", sum("0/3", 5, 0))
	b := write("b", sum("1/3", 4, 0))
	c := write("c", sum("2/3", 6, 0))
	r := runCLI(t, "", "report", a, b, c)
	if r.code != 0 || !strings.Contains(r.stdout, "3 outputs: 15 files: 15 uploaded, 0 failed; 300 B") {
		t.Errorf("clean run: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	failed := write("f", sum("2/3", 5, 1))
	r = runCLI(t, "", "report", a, b, failed)
	if r.code != 1 || !strings.Contains(r.stderr, "1 transfers failed") {
		t.Errorf("failed shard: exit %d, %q", r.code, r.stderr)
	}
	r = runCLI(t, "", "report", a, c)
	if r.code != 1 || !strings.Contains(r.stderr, "shard 1/3 is missing") {
		t.Errorf("missing shard: exit %d, %q", r.code, r.stderr)
	}
	// A summary that claims a huge split costs no more than the files: ten
	// missing shards are named, the rest counted.
	huge := write("huge", sum("0/999999999", 1, 0))
	r = runCLI(t, "", "report", huge)
	if r.code != 1 || !strings.Contains(r.stderr, "shard 10/999999999 is missing") || strings.Contains(r.stderr, "shard 11/999999999") ||
		!strings.Contains(r.stderr, "999999998 shards of 999999999 are missing in all") {
		t.Errorf("huge split: exit %d, %q", r.code, r.stderr)
	}
	cut := write("cut", strings.Replace(file, "%s", "1/3", 1))
	r = runCLI(t, "", "report", a, cut, c)
	if r.code != 1 || !strings.Contains(r.stderr, cut+" has no summary at its end: that worker did not finish") {
		t.Errorf("unfinished shard: exit %d, %q", r.code, r.stderr)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// The shards of a copy between buckets or of a move: report adds up every count their
// summaries hold, not only the uploads' (it said "2 outputs: 7 files: 0 failed" of 7 copies).
func TestReportMergesCopiesAndMoves(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a", `{"type":"summary","shard":"0/2","files":3,"copied":3,"bytes":30,"rewritten":30,"seconds":2}`+"\n")
	b := write("b", `{"type":"summary","shard":"1/2","files":5,"copied":2,"moved":2,"skipped":1,"bytes":40,"rewritten":20,"transferred":20,"seconds":4}`+"\n")
	r := runCLI(t, "", "report", a, b)
	if want := "2 outputs: 8 files: 2 moved, 5 copied, 1 skipped, 0 failed; 70 B in 4.0s"; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 and %q", r.code, r.stdout, r.stderr, want)
	}
	r = runCLI(t, "", "report", "--json", a, b)
	if r.code != 0 || !strings.Contains(r.stdout, `"moved":2,"copied":5,`) || !strings.Contains(r.stdout, `"rewritten":50,`) {
		t.Errorf("--json: exit %d, stdout %q; want moved 2, copied 5, rewritten 50", r.code, r.stdout)
	}
}
