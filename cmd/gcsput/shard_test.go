package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/shard"
)

// Four shards run at once over one 2,000-file tree: every object is created
// exactly once, none is missing, and each record names its shard.
func TestShardsSplitATreeExactlyOnce(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	src := filepath.Join(dir, "tree")
	for i := range 2000 {
		p := filepath.Join(src, fmt.Sprintf("d%02d", i/100), fmt.Sprintf("f%04d", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte{byte(i)}, 0o644)
	}
	var wg sync.WaitGroup
	results := make([]cliResult, 4)
	for i := range 4 {
		wg.Go(func() {
			results[i] = runIn(context.Background(), false, "cp", "-r", "-j", "8", "--json", "--shard", fmt.Sprintf("%d/4", i),
				"--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, fmt.Sprintf("state%d", i)), src, "gs://bkt/t/")
		})
	}
	wg.Wait()
	total := 0
	for i, r := range results {
		files, sum := jsonLines(t, r.stdout)
		if r.code != 0 || sum.Failed != 0 || sum.Shard != fmt.Sprintf("%d/4", i) || len(files) == 0 {
			t.Fatalf("shard %d: exit %d, %+v\n%s", i, r.code, sum, r.stderr)
		}
		for _, rec := range files {
			if rec.Shard != sum.Shard {
				t.Errorf("shard %d: record %+v", i, rec)
			}
		}
		total += sum.Uploaded
	}
	// 2,000 successful inserts made 2,000 distinct objects: each exactly once.
	inserts := 0
	for _, rec := range srv.Log() {
		if rec.Op == "storage.objects.insert" && rec.Status == 200 {
			inserts++
		}
	}
	names, _ := srv.ObjectNames("bkt")
	if total != 2000 || len(names) != 2000 || inserts != 2000 {
		t.Fatalf("%d uploaded by the shards, %d objects, %d inserts; want 2000 of each", total, len(names), inserts)
	}
}

func TestShardFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cp", "--shard", "4/4", "x", "gs://bkt/"}, "gives shard 4 of 4"},
		{[]string{"cp", "--shard", "one", "x", "gs://bkt/"}, "want I/N"},
		{[]string{"cp", "--shards", "3", "x", "gs://bkt/"}, "--shards goes with --shard auto"},
	} {
		wantUsage(t, runCLI(t, "", tc.args...), tc.want)
	}
	// auto reads the engine's variables, and names the one that is wrong.
	for k, v := range map[string]string{"CLOUD_RUN_TASK_INDEX": "", "BATCH_TASK_INDEX": "", "SLURM_ARRAY_TASK_ID": "", "JOB_COMPLETION_INDEX": ""} {
		t.Setenv(k, v)
	}
	wantUsage(t, runCLI(t, "", "cp", "--shard", "auto", "x", "gs://bkt/"), "none of CLOUD_RUN_TASK_INDEX")
	t.Setenv("JOB_COMPLETION_INDEX", "2")
	r := runCLI(t, "", "cp", "--shard", "auto", "x", "gs://bkt/")
	if !strings.Contains(r.stderr, "JOB_COMPLETION_INDEX") {
		t.Errorf("Kubernetes without --shards: %q", r.stderr)
	}
}

// A shard interrupted mid-run and run again finishes its share, and no other
// shard's object is touched (their generations stay).
func TestShardRerunTouchesOnlyItsOwn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "tree")
	for i := range 400 {
		p := filepath.Join(src, fmt.Sprintf("f%04d", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte{byte(i)}, 0o644)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Logf: func(format string, args ...any) {
		if strings.Contains(fmt.Sprintf(format, args...), "injecting stall") {
			cancel(errInterrupted) // shard 2 is interrupted with part of its share done
		}
	}})
	run := func(ctx context.Context, i int) cliResult {
		return runIn(ctx, false, "cp", "-r", "-j", "1", "--json", "--shard", fmt.Sprintf("%d/4", i),
			"--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, fmt.Sprintf("state%d", i)), src, "gs://bkt/t/")
	}
	for _, i := range []int{0, 1, 3} {
		if r := run(context.Background(), i); r.code != 0 {
			t.Fatalf("shard %d: exit %d\n%s", i, r.code, r.stderr)
		}
	}
	before := map[string]int64{}
	names, _ := srv.ObjectNames("bkt")
	for _, n := range names {
		a, _ := srv.Attrs("bkt", n)
		before[n] = a.Generation
	}
	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Skip: 30, Kind: fakegcs.KindStall, Delay: time.Hour})
	if r := run(ctx, 2); r.code != exitInterrupted {
		t.Fatalf("interrupted shard 2: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(context.Background(), 2); r.code != 0 {
		t.Fatalf("shard 2 rerun: exit %d\n%s", r.code, r.stderr)
	}
	names, _ = srv.ObjectNames("bkt")
	if len(names) != 400 {
		t.Fatalf("%d objects, want 400", len(names))
	}
	for n, gen := range before {
		if a, _ := srv.Attrs("bkt", n); a.Generation != gen {
			t.Errorf("%s (shard %d) was touched by shard 2's run: generation %d -> %d", n, shard.Of(n, 4), gen, a.Generation)
		}
	}
	for _, n := range names {
		if _, ok := before[n]; !ok && shard.Of(n, 4) != 2 {
			t.Errorf("%s is not shard 2's, yet shard 2 made it", n)
		}
	}
}

// slurmEnv sets the variables Slurm gives an array task.
func slurmEnv(t *testing.T, id, lo, hi, count int) {
	for k, v := range map[string]string{"CLOUD_RUN_TASK_INDEX": "", "BATCH_TASK_INDEX": "", "JOB_COMPLETION_INDEX": "",
		"SLURM_ARRAY_TASK_ID": itoa(id), "SLURM_ARRAY_TASK_MIN": itoa(lo), "SLURM_ARRAY_TASK_MAX": itoa(hi),
		"SLURM_ARRAY_TASK_COUNT": itoa(count), "SLURM_ARRAY_TASK_STEP": "1"} {
		t.Setenv(k, v)
	}
}

// Task 2 of a 4-task Slurm array is cancelled with part of its share sent,
// then re-submitted alone (sbatch --array=2: SLURM_ARRAY_TASK_COUNT=1,
// SLURM_ARRAY_TASK_MIN=2). With the count pinned (--shards 4) it is still
// shard 2/4: it resumes its saved session and sends only its own share.
// Without it, --shard auto would be shard 0/1, the whole tree: the task's
// state directory remembers the split, and the run is refused, naming the
// variables and how to re-run the task, before anything is sent.
func TestShardAutoRerunOfOneSlurmTask(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "tree")
	for i := range 200 {
		writeFile(t, filepath.Join(src, fmt.Sprintf("f%03d", i)), 1+i%7)
	}
	writeFile(t, filepath.Join(src, "big.bin"), 9<<20) // shard 2's, sent in chunks, cut short
	if shard.Of("big.bin", 4) != 2 {
		t.Fatal("the test needs big in shard 2 of 4")
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Logf: func(format string, args ...any) {
		if strings.Contains(fmt.Sprintf(format, args...), "injecting stall") {
			cancel(errInterrupted) // scancel, with big's first chunk kept
		}
	}})
	run := func(ctx context.Context, pin ...string) cliResult {
		args := append([]string{"sync", "-j", "1", "--chunk-size", "1MiB", "--json", "--shard", "auto"}, pin...)
		return runIn(ctx, false, append(args, "--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state-2"), src, "gs://bkt/t")...)
	}
	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Object: "t/big.bin", Phase: fakegcs.PhaseChunk, Offset: new(int64(1 << 20)), Kind: fakegcs.KindStall, Delay: time.Hour})
	slurmEnv(t, 2, 0, 3, 4)
	if r := run(ctx, "--shards", "4"); r.code != exitInterrupted {
		t.Fatalf("task 2 cancelled: exit %d\n%s", r.code, r.stderr)
	}
	srv.ClearFaults()
	before, _ := srv.ObjectNames("bkt")
	slurmEnv(t, 2, 2, 2, 1) // sbatch --array=2
	r := run(context.Background())
	if r.code != exitUsage || !strings.Contains(r.stderr, `--shard auto gives shard 0/1 (SLURM_ARRAY_TASK_ID="2" SLURM_ARRAY_TASK_COUNT="1" SLURM_ARRAY_TASK_MIN="2"`) ||
		!strings.Contains(r.stderr, "recorded this job split into 4 shards") || !strings.Contains(r.stderr, "sbatch --array=I") {
		t.Errorf("re-run without --shards: exit %d\n%s", r.code, r.stderr)
	}
	if after, _ := srv.ObjectNames("bkt"); len(after) != len(before) {
		t.Fatalf("the refused re-run made %d objects", len(after)-len(before))
	}
	r = run(context.Background(), "--shards", "4")
	files, sum := jsonLines(t, r.stdout)
	if r.code != 0 || sum.Shard != "2/4" || files["gs://bkt/t/big.bin"].Status != "resumed" || files["gs://bkt/t/big.bin"].ResumedFrom != 1<<20 {
		t.Fatalf("re-run with --shards 4: exit %d, %+v, big %+v\n%s", r.code, sum, files["gs://bkt/t/big.bin"], r.stderr)
	}
	for name, n := range srv.InsertCounts("bkt") {
		if shard.Of(strings.TrimPrefix(name, "t/"), 4) != 2 || n != 1 {
			t.Errorf("%s (shard %d of 4) was inserted %d times by task 2", name, shard.Of(strings.TrimPrefix(name, "t/"), 4), n)
		}
	}
}
