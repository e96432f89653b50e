package main

import (
	"bytes"
	"fmt"
	"github.com/gcsput/gcsput/cmd/gcsbench/internal/usage"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// manyRows parses the manyfiles table: run name → its seven figures.
func manyRows(t *testing.T, out string) map[string][]float64 {
	t.Helper()
	rows := map[string][]float64{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "|")
		if len(f) != 9 || strings.TrimSpace(f[1]) == "run" || strings.HasPrefix(f[1], "---") {
			continue
		}
		var v []float64
		for _, s := range f[2:8] {
			x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil && strings.TrimSpace(s) != "–" {
				t.Fatalf("row %q: %v", line, err)
			}
			v = append(v, x)
		}
		rows[strings.TrimSpace(f[1])] = v
	}
	return rows
}

// TestManyFiles runs the scenario end to end on 300 files: the gcsput
// command as a user runs it, once, then as four shards, each file checked
// against fakegcs's insert counts. No timing is asserted.
func TestManyFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gcsput command")
	}
	t.Parallel()
	var out, log bytes.Buffer
	args := []string{"-quick", "-scenarios", scenarioManyFiles, "-many-files", "300", "-tmpdir", t.TempDir()}
	code := run(t.Context(), args, nil, &out, &log)
	t.Logf("stderr:\n%s\nstdout:\n%s", log.String(), out.String())
	if code != 0 || strings.Contains(out.String(), "Failures") {
		t.Fatalf("exit code %d, or failures reported", code)
	}
	rows := manyRows(t, out.String())
	shardFiles := 0.0
	for _, name := range []string{"2000 files (reference, median of 10)", "1 process", "shard 0/4", "shard 1/4", "shard 2/4", "shard 3/4", "4 shards at once"} {
		r, ok := rows[name]
		if !ok {
			t.Fatalf("no row %q", name)
		}
		// files, seconds, files/s, CPU s, peak RSS MiB
		if r[0] < 1 || r[1] <= 0 || r[2] <= 0 || r[3] <= 0 || r[4] < 1 {
			t.Errorf("row %q: implausible figures %v", name, r)
		}
		if strings.HasPrefix(name, "shard ") {
			shardFiles += r[0]
		}
	}
	if rows["1 process"][0] != 300 || rows["4 shards at once"][0] != 300 || shardFiles != 300 {
		t.Errorf("files: 1 process %v, shards %v (sum %v); want 300", rows["1 process"][0], rows["4 shards at once"][0], shardFiles)
	}
	for _, want := range []string{
		"PASS manyfiles 4 shards: every file inserted exactly once: 300 of 300 files inserted exactly once, 0 missing, 0 more than once, 0 other objects",
		"manyfiles upload: gcsput peak RSS ≤ 256 MiB: ",
		"manyfiles upload: gcsput files/s ≥ 0.8× the 2000-file rate: ",
	} {
		if !strings.Contains(out.String(), "- PASS "+strings.TrimPrefix(want, "PASS ")) && !strings.Contains(out.String(), "- FAIL "+want) {
			t.Errorf("no target line %q", want)
		}
	}
}

// TestManyFilesVerdictIsFakegcsCount plants one object in every fakegcs of
// the scenario before gcsput runs: gcsput's own reports are clean, but
// fakegcs counts that object's insert twice, and the shards' target fails
// naming it.
func TestManyFilesVerdictIsFakegcsCount(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gcsput command")
	}
	t.Parallel()
	planted := manyPrefix + manyName(7)
	m := &manyEnv{o: options{ManyFiles: 40}, dir: t.TempDir(), log: io.Discard,
		newServer: func() (*fakegcs.Server, error) {
			srv, err := newManyServer()
			if err == nil {
				err = mediaInsert(srv, planted)
			}
			return srv, err
		}}
	rep := &manyReport{files: 40}
	if err := m.run(t.Context(), rep); err != nil {
		t.Fatal(err)
	}
	tg := rep.onceTarget()
	want := "39 of 40 files inserted exactly once, 0 missing, 1 more than once, 0 other objects (2× " + planted + ")"
	if tg.status != "FAIL" || !strings.Contains(tg.detail, want) {
		t.Errorf("target %s %q, want FAIL with %q", tg.status, tg.detail, want)
	}
	if rep.single == nil || len(rep.errs) != manyRefRuns+2 {
		t.Errorf("the runs' figures should stand and each run name the fault: single %v, errors %q", rep.single, rep.errs)
	}
}

// mediaInsert creates bucketName/name on srv with a single-request upload.
func mediaInsert(srv *fakegcs.Server, name string) error {
	res, err := http.Post(srv.URL()+"/upload/storage/v1/b/"+bucketName+"/o?uploadType=media&name="+name, "text/plain", strings.NewReader("x"))
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("insert %s: %s", name, res.Status)
	}
	return nil
}

func TestCheckOnce(t *testing.T) {
	const n = 5
	exact := func() map[string]int {
		m := map[string]int{}
		for i := range n {
			m["many/"+manyName(i)] = 1
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		change func(map[string]int)
		ok     bool
		want   string
	}{
		{"exact", func(map[string]int) {}, true,
			"5 of 5 files inserted exactly once, 0 missing, 0 more than once, 0 other objects"},
		{"twice", func(m map[string]int) { m["many/d0000/f0000003"] = 2 }, false,
			"4 of 5 files inserted exactly once, 0 missing, 1 more than once, 0 other objects (2× many/d0000/f0000003)"},
		{"missing", func(m map[string]int) { delete(m, "many/d0000/f0000002"); m["many/d0000/f0000004"] = 0 }, false,
			"3 of 5 files inserted exactly once, 2 missing, 0 more than once, 0 other objects (missing many/d0000/f0000002, missing many/d0000/f0000004)"},
		{"others", func(m map[string]int) { m["other/x"] = 1; m["many/d0000/f0000005"] = 1; m["many/d0000/f3"] = 1 }, false,
			"5 of 5 files inserted exactly once, 0 missing, 0 more than once, 3 other objects (other many/d0000/f0000005, other many/d0000/f3, other other/x)"},
	} {
		m := exact()
		tc.change(m)
		got := checkOnce(m, "many/", n)
		if got.ok() != tc.ok || got.String() != tc.want {
			t.Errorf("%s: ok %v %q, want %v %q", tc.name, got.ok(), got.String(), tc.ok, tc.want)
		}
	}
}

// TestManyTargets judges fabricated runs: each target fails when its figure
// misses, and says by how much.
func TestManyTargets(t *testing.T) {
	proc := func(name string, files int, secs float64, rssMiB int64) manyProc {
		return manyProc{name: name, Result: usage.Result{Seconds: secs, PeakRSS: rssMiB << 20}, summary: gcsputSummary{Uploaded: files}}
	}
	rep := &manyReport{files: 1000}
	for _, secs := range []float64{0.2, 0.1, 0.4} { // 10,000, 20,000, 5,000 files/s: median 10,000
		r := manyRun{procs: []manyProc{proc("1 process", 2000, secs, 30)}, srvCPU: 0.1}
		r.procs[0].CPU = 0.2
		rep.ref = append(rep.ref, r)
	}
	rep.single = &manyRun{procs: []manyProc{proc("1 process", 1000, 0.125, 300)}, srvCPU: 0.06} // 8,000 files/s
	rep.single.procs[0].CPU = 0.09
	rep.shards = &manyRun{procs: []manyProc{proc("shard 0/2", 500, 1, 40), proc("shard 1/2", 500, 1, 50)}}
	once := checkOnce(map[string]int{"many/" + manyName(0): 2}, "many/", 2)
	rep.shardsOnce = &once
	var buf bytes.Buffer
	rep.write(&buf)
	for _, want := range []string{
		"- FAIL manyfiles upload: gcsput peak RSS ≤ 256 MiB: 300 MiB at most (1 process 300 MiB, shard 1/2 50 MiB)",
		"- PASS manyfiles upload: gcsput files/s ≥ 0.8× the 2000-file rate: 0.80× (8000 vs 10000 files/s)",
		"- FAIL manyfiles 4 shards: every file inserted exactly once: 0 of 2 files inserted exactly once, 1 missing, 1 more than once, 0 other objects (missing many/d0000/f0000001, 2× many/d0000/f0000000), by fakegcs's per-object insert counts",
		// µs per file: gcsput 90 vs 100, fakegcs 60 vs 50.
		"- info manyfiles upload: CPU µs per file, 1000 files vs 2000: gcsput 90 vs 100, fakegcs 60 vs 50, both 150 vs 150 (1.00×)",
		"| 2000 files (reference, median of 3) | 2000 | 0.20 | 10000 | 0.20 | 30 | 0.10 |",
	} {
		if !strings.Contains(buf.String(), want+"\n") {
			t.Errorf("missing %q in\n%s", want, buf.String())
		}
	}
	rep.single.procs[0].Seconds = 0.126
	if tg := rep.rateTarget(); tg.status != "FAIL" {
		t.Errorf("7937 vs 10000 files/s: %s %s", tg.status, tg.detail)
	}
}
