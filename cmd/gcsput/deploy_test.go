package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/shard"
)

// The deploy/ examples are run as their engine runs them: the script of a
// Kubernetes or Cloud Run container under /bin/sh, the sbatch file under
// bash with Slurm's --output, --error and --open-mode, each with the
// engine's variables, the built gcsput on the PATH, its paths swapped for
// local ones and its bucket a fakegcs one.

// containerScript returns the "/bin/sh -c" script of the first container of
// a Kubernetes or Cloud Run manifest, parsed with a real YAML library.
func containerScript(t *testing.T, path string) (string, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var find func(v any) map[string]any
	find = func(v any) map[string]any {
		switch v := v.(type) {
		case map[string]any:
			if cs, ok := v["containers"].([]any); ok && len(cs) > 0 {
				return cs[0].(map[string]any)
			}
			for _, x := range v {
				if r := find(x); r != nil {
					return r
				}
			}
		case []any:
			for _, x := range v {
				if r := find(x); r != nil {
					return r
				}
			}
		}
		return nil
	}
	c := find(doc)
	cmd, _ := c["command"].([]any)
	args, _ := c["args"].([]any)
	if len(cmd) != 2 || cmd[0] != "/bin/sh" || cmd[1] != "-c" || len(args) != 1 {
		t.Fatalf("%s: want command [/bin/sh, -c] and one script in args: %v %v", path, cmd, args)
	}
	return args[0].(string), doc
}

// sbatch is an sbatch file: its script and its #SBATCH options.
type sbatch struct {
	script string
	opts   map[string]string // "array" → "0-15", "requeue" → ""
}

func readSbatch(t *testing.T, path string) sbatch {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sbatch{script: string(b), opts: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(s.script))
	for sc.Scan() {
		if opt, ok := strings.CutPrefix(sc.Text(), "#SBATCH --"); ok {
			k, v, _ := strings.Cut(opt, "=")
			s.opts[k] = v
		}
	}
	return s
}

// engineRun is one deploy example under test.
type engineRun struct {
	t       *testing.T
	srv     *fakegcs.Server
	dir     string // holds src/, bin/gcsput, and the outputs
	script  string // with its paths swapped for local ones
	slurm   *sbatch
	outputs string // the glob of the --json outputs, for report
}

func newEngineRun(t *testing.T, script string, swap ...string) *engineRun {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	dir := t.TempDir()
	for i := range 60 {
		writeFile(t, filepath.Join(dir, "src", fmt.Sprintf("d%d", i%3), "f"+itoa(i)), 10+i)
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(gcsputBin, filepath.Join(dir, "bin", "gcsput")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(swap); i += 2 {
		script = strings.ReplaceAll(script, swap[i], strings.ReplaceAll(swap[i+1], "DIR", dir))
	}
	return &engineRun{t: t, srv: fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"my-bucket"}}), dir: dir, script: script}
}

// task runs the script once with the engine's variables, as the engine
// would: stdout and stderr are the container's, or Slurm's files.
func (e *engineRun) task(vars ...string) (code int, stderr string) {
	e.t.Helper()
	env := []string{"PATH=" + filepath.Join(e.dir, "bin") + ":" + os.Getenv("PATH"), "HOME=" + e.dir,
		"STORAGE_EMULATOR_HOST=" + e.srv.Host()}
	env = append(env, vars...)
	shell := []string{"/bin/sh", "-c", e.script}
	if e.slurm != nil {
		shell = []string{"/bin/bash", "-c", e.script}
	}
	cmd := exec.Command(shell[0], shell[1:]...)
	cmd.Env, cmd.Dir = env, e.dir
	var errb strings.Builder
	cmd.Stderr = &errb
	if e.slurm != nil {
		cmd.Stdout, cmd.Stderr = e.slurmFile("output", vars), e.slurmFile("error", vars)
	}
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		e.t.Fatal(err)
	}
	if e.slurm != nil {
		b, _ := os.ReadFile(cmd.Stderr.(*os.File).Name())
		return cmd.ProcessState.ExitCode(), string(b)
	}
	return cmd.ProcessState.ExitCode(), errb.String()
}

// slurmFile opens the file Slurm would give the task for --output or
// --error: %a is the array index, and it is appended to only under
// --open-mode=append (Slurm's default truncates it).
func (e *engineRun) slurmFile(opt string, vars []string) *os.File {
	name := e.slurm.opts[opt]
	for _, v := range vars {
		if id, ok := strings.CutPrefix(v, "SLURM_ARRAY_TASK_ID="); ok {
			name = strings.ReplaceAll(name, "%a", id)
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if e.slurm.opts["open-mode"] == "append" {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(filepath.Join(e.dir, name), flags, 0o644)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { f.Close() })
	return f
}

// mustTask runs a task that must succeed.
func (e *engineRun) mustTask(vars ...string) {
	e.t.Helper()
	if code, stderr := e.task(vars...); code != 0 {
		e.t.Fatalf("task %q: exit %d\n%s", vars, code, stderr)
	}
}

// report runs gcsput report over the outputs, each of which must be NDJSON.
func (e *engineRun) report() cliResult {
	e.t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.dir, e.outputs))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if !json.Valid([]byte(line)) {
				e.t.Errorf("%s line %d is not JSON: %q", f, i+1, line)
			}
		}
	}
	return runCLI(e.t, "", append([]string{"report"}, files...)...)
}

// inserts is how many objects were created since the last call.
func (e *engineRun) inserts() int {
	n := 0
	for _, r := range e.srv.Log() {
		if r.Op == "storage.objects.insert" && r.Status == 200 {
			n++
		}
	}
	e.srv.ResetStats()
	return n
}

// rerunOne checks a whole job, then the re-run of one task on its own: the
// task's objects are deleted (it never finished), and the re-run under
// vars sends those and nothing else; report passes again.
func (e *engineRun) rerunOne(n, task int, full func(i int) []string, rerun []string) {
	e.t.Helper()
	for i := range n {
		e.mustTask(full(i)...)
	}
	if got := e.inserts(); got != 60 {
		e.t.Fatalf("the whole job inserted %d objects, want 60", got)
	}
	if r := e.report(); r.code != 0 {
		e.t.Fatalf("report after the whole job: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	names, _ := e.srv.ObjectNames("my-bucket")
	gone := 0
	for _, name := range names {
		if shard.Of(strings.TrimPrefix(name, e.prefix()), n) == task {
			e.srv.DeleteObject("my-bucket", name)
			gone++
		}
	}
	e.mustTask(rerun...)
	if got := e.inserts(); gone == 0 || got != gone {
		e.t.Errorf("the re-run of task %d under %q inserted %d objects; its shard had %d", task, rerun, got, gone)
	}
	if r := e.report(); r.code != 0 {
		e.t.Errorf("report after the re-run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// prefix is the destination prefix of the examples' objects.
func (e *engineRun) prefix() string {
	m := regexp.MustCompile(`gs://my-bucket/(\S+)`).FindStringSubmatch(e.script)
	return strings.TrimSuffix(m[1], "/") + "/"
}

func TestDeploySlurmArray(t *testing.T) {
	t.Parallel()
	sb := readSbatch(t, "../../deploy/slurm/gcsput-array.sbatch")
	e := newEngineRun(t, sb.script, "/lustre/project/results", "DIR/src")
	n := slurmShards(t, sb)
	e.slurm, e.outputs = &sb, "gcsput-"+itoa(n)+"-*.ndjson"
	if sb.opts["output"] == sb.opts["error"] || sb.opts["open-mode"] != "append" || sb.opts["requeue"] != "" {
		t.Fatalf("stdout and stderr must go to their own files, appended, and the task be requeueable: %v", sb.opts)
	}
	full := func(i int) []string {
		return []string{"SLURM_ARRAY_TASK_ID=" + itoa(i), "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_MAX=" + itoa(n-1),
			"SLURM_ARRAY_TASK_COUNT=" + itoa(n), "SLURM_ARRAY_TASK_STEP=1"}
	}
	// sbatch --array=2: an array of one task, starting at 2.
	e.rerunOne(n, 2, full, []string{"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_MIN=2", "SLURM_ARRAY_TASK_MAX=2",
		"SLURM_ARRAY_TASK_COUNT=1", "SLURM_ARRAY_TASK_STEP=1"})
	// scontrol requeue: the same variables again; nothing is sent twice, and
	// the earlier runs' records are kept before the new run's.
	e.mustTask(append(full(3), "SLURM_RESTART_COUNT=1")...)
	if got := e.inserts(); got != 0 {
		t.Errorf("the requeued task 3 inserted %d objects, want 0", got)
	}
	b, _ := os.ReadFile(filepath.Join(e.dir, "gcsput-"+itoa(n)+"-3.ndjson"))
	if got := strings.Count(string(b), `"type":"summary"`); got != 2 {
		t.Errorf("gcsput-N-3.ndjson holds %d summaries after a requeue, want 2 (appended):\n%s", got, b)
	}
	if r := e.report(); r.code != 0 {
		t.Errorf("report after the requeue: exit %d\n%s", r.code, r.stderr)
	}
}

// slurmShards is the sbatch file's SHARDS, which must match its --array.
func slurmShards(t *testing.T, sb sbatch) int {
	m := regexp.MustCompile(`(?m)^SHARDS=(\d+)$`).FindStringSubmatch(sb.script)
	if m == nil {
		t.Fatal("no SHARDS=N line")
	}
	n, _ := strconv.Atoi(m[1])
	if want := fmt.Sprintf("0-%d", n-1); sb.opts["array"] != want {
		t.Fatalf("#SBATCH --array=%s, want %s for SHARDS=%d", sb.opts["array"], want, n)
	}
	// Each split its own outputs and state: a job re-run with another N never meets them.
	for _, opt := range []string{"output", "error"} {
		if !strings.HasPrefix(sb.opts[opt], fmt.Sprintf("gcsput-%d-%%a.", n)) {
			t.Fatalf("#SBATCH --%s=%s, want gcsput-%d-%%a.*: each split its own files", opt, sb.opts[opt], n)
		}
	}
	if !strings.Contains(sb.script, `--state-dir "$HOME/.gcsput-state/split-$SHARDS/`) {
		t.Fatal("the state directory must be the split's own: .gcsput-state/split-$SHARDS/")
	}
	return n
}

// yamlAt walks a parsed YAML document: a key of a map, or an index of a list.
func yamlAt(t *testing.T, doc any, keys ...any) any {
	t.Helper()
	v := doc
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("no map at %q in %v", k, keys)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("no list item %d in %v", k, keys)
			}
			v = l[k]
		}
	}
	return v
}

// k8sEnv is a container's env value of name, "" when absent.
func k8sEnv(t *testing.T, container any, name string) string {
	t.Helper()
	env, _ := yamlAt(t, container, "env").([]any)
	for _, e := range env {
		if m := e.(map[string]any); m["name"] == name {
			v, _ := m["value"].(string)
			return v
		}
	}
	return ""
}

// The Indexed Job survives disruptions and keeps its shards apart: a disruption
// (DisruptionTarget) is ignored, not counted against backoffLimitPerIndex; a pod is
// replaced only once it failed (no two pods on one index's files);
// no maxFailedIndexes stops the other shards (report judges); the pod has
// resources (not BestEffort) and a grace period that covers gcsput's save; and each
// split (N) has its own directory.
func TestDeployKubernetesGuards(t *testing.T) {
	t.Parallel()
	_, doc := containerScript(t, "../../deploy/kubernetes/indexed-job.yaml")
	spec := yamlAt(t, doc, "spec")
	if got := yamlAt(t, spec, "podReplacementPolicy"); got != "Failed" {
		t.Errorf("podReplacementPolicy = %v, want Failed: a replacement must not start while the old pod still writes", got)
	}
	if got, ok := spec.(map[string]any)["maxFailedIndexes"]; ok {
		t.Errorf("maxFailedIndexes = %v: one failed index would stop every other shard; leave it out and let report judge", got)
	}
	ignore := false
	rules, _ := yamlAt(t, spec, "podFailurePolicy", "rules").([]any)
	for _, r := range rules {
		r := r.(map[string]any)
		conds, _ := r["onPodConditions"].([]any)
		for _, c := range conds {
			if c.(map[string]any)["type"] == "DisruptionTarget" && r["action"] == "Ignore" {
				ignore = true
			}
		}
	}
	if !ignore {
		t.Errorf("podFailurePolicy must Ignore DisruptionTarget, so a drain, eviction or preemption (gcsput saves, exits 130) does not count against backoffLimitPerIndex: %v", rules)
	}
	pod := yamlAt(t, spec, "template", "spec")
	grace, _ := yamlAt(t, pod, "terminationGracePeriodSeconds").(int)
	if grace < 5 || grace > 30 {
		t.Errorf("terminationGracePeriodSeconds = %d, want one set from gcsput's measured save (under 0.5 s) with margin, 5 to 30", grace)
	}
	c := yamlAt(t, pod, "containers", 0)
	for _, k := range []string{"requests", "limits"} {
		if yamlAt(t, c, "resources", k, "memory") == nil {
			t.Errorf("resources.%s.memory unset: a BestEffort pod is the first OOM-killed, and an OOM kill saves nothing", k)
		}
	}
	n := yamlAt(t, spec, "completions").(int)
	sub, _ := yamlAt(t, c, "volumeMounts", 1, "subPathExpr").(string)
	if k8sEnv(t, c, "SHARDS") != itoa(n) || !strings.Contains(sub, "$(SHARDS)") || !strings.Contains(sub, "$(JOB_COMPLETION_INDEX)") {
		t.Errorf("SHARDS = %q (completions %d), state subPathExpr %q: each split needs its own directory, named by SHARDS", k8sEnv(t, c, "SHARDS"), n, sub)
	}
}

func TestDeployKubernetesIndexedJob(t *testing.T) {
	t.Parallel()
	script, doc := containerScript(t, "../../deploy/kubernetes/indexed-job.yaml")
	n := doc["spec"].(map[string]any)["completions"].(int)
	if !strings.Contains(script, `--shard auto --shards "$SHARDS" `) {
		t.Fatalf("the script must pin --shards to SHARDS (= completions, %d): %s", n, script)
	}
	c := yamlAt(t, doc, "spec", "template", "spec", "containers", 0)
	sub := yamlAt(t, c, "volumeMounts", 1, "subPathExpr").(string)
	// Each pod sees its own subdirectory of the state claim as /state.
	sub = regexp.MustCompile(`\$\((\w+)\)`).ReplaceAllString(sub, "$${$1}")
	e := newEngineRun(t, script, " /data ", " DIR/src ", "/state/", "DIR/"+sub+"/")
	shards := "SHARDS=" + k8sEnv(t, c, "SHARDS")
	e.outputs = "split-" + itoa(n) + "/shard-*/gcsput.ndjson"
	for i := range n {
		os.MkdirAll(filepath.Join(e.dir, "split-"+itoa(n), "shard-"+itoa(i)), 0o755)
	}
	// Kubernetes retries a failed index with the same JOB_COMPLETION_INDEX.
	e.rerunOne(n, 2, func(i int) []string { return []string{"JOB_COMPLETION_INDEX=" + itoa(i), shards} },
		[]string{"JOB_COMPLETION_INDEX=2", shards})
}

// cloudRunScript is the Cloud Run job's script and its taskCount.
func cloudRunScript(t *testing.T) (string, int) {
	t.Helper()
	script, doc := containerScript(t, "../../deploy/cloudrun/job.yaml")
	n := yamlAt(t, doc, "spec", "template", "spec", "taskCount").(int)
	if !regexp.MustCompile(`(?m)^n=`+itoa(n)+`$`).MatchString(script) || !strings.Contains(script, `--shard "$i/$n"`) {
		t.Fatalf("the script must split in n = taskCount (%d) and name shard $i/$n: %s", n, script)
	}
	return script, n
}

func TestDeployCloudRunJob(t *testing.T) {
	t.Parallel()
	script, n := cloudRunScript(t)
	e := newEngineRun(t, script, "/mnt/data", "DIR/src", "/out/", "DIR/")
	e.outputs = "split-" + itoa(n) + "/gcsput-*.ndjson"
	full := func(i int) []string {
		return []string{"CLOUD_RUN_TASK_INDEX=" + itoa(i), "CLOUD_RUN_TASK_COUNT=" + itoa(n)}
	}
	// gcloud run jobs execute --tasks=1 --update-env-vars=SHARD=2: index 0 of 1.
	e.rerunOne(n, 2, full, []string{"CLOUD_RUN_TASK_INDEX=0", "CLOUD_RUN_TASK_COUNT=1", "SHARD=2"})
}

// The Cloud Run job's script refuses, before it writes any output, a SHARD left on an
// execution of several tasks (each would run that shard at once, into one file on NFS),
// a SHARD that is not one of its shards, and a task count other than its split; and the
// job is on a VPC network, which its NFS volumes need.
func TestDeployCloudRunGuards(t *testing.T) {
	t.Parallel()
	script, n := cloudRunScript(t)
	_, doc := containerScript(t, "../../deploy/cloudrun/job.yaml")
	ann, _ := yamlAt(t, doc, "spec", "template", "metadata", "annotations").(map[string]any)
	if ann["run.googleapis.com/network-interfaces"] == nil || ann["run.googleapis.com/vpc-access-egress"] == nil {
		t.Errorf("the execution template has no VPC network annotations (%v): its NFS volumes cannot be reached", ann)
	}
	e := newEngineRun(t, script, "/mnt/data", "DIR/src", "/out/", "DIR/")
	for _, tc := range []struct {
		vars []string
		want string
	}{
		{[]string{"CLOUD_RUN_TASK_INDEX=3", "CLOUD_RUN_TASK_COUNT=" + itoa(n), "SHARD=2"},
			"SHARD=2 is set on an execution of " + itoa(n) + " tasks: each would run shard 2 at once"},
		{[]string{"CLOUD_RUN_TASK_INDEX=0", "CLOUD_RUN_TASK_COUNT=1", "SHARD=" + itoa(n)},
			"SHARD=" + itoa(n) + " is not a shard of this job: want 0 to " + itoa(n-1)},
		{[]string{"CLOUD_RUN_TASK_INDEX=0", "CLOUD_RUN_TASK_COUNT=1", "SHARD=x"}, "SHARD=x is not a shard of this job"},
		{[]string{"CLOUD_RUN_TASK_INDEX=9", "CLOUD_RUN_TASK_COUNT=" + itoa(2*n)},
			"this execution has " + itoa(2*n) + " tasks, the script splits the tree in " + itoa(n) + ": keep taskCount and n equal"},
		{[]string{"CLOUD_RUN_TASK_INDEX=0", "CLOUD_RUN_TASK_COUNT=1"}, "this execution has 1 tasks"},
	} {
		code, stderr := e.task(tc.vars...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("task %q: exit %d, stderr %q; want exit 2 and %q", tc.vars, code, stderr, tc.want)
		}
	}
	if outs, _ := filepath.Glob(filepath.Join(e.dir, "split-*", "*")); len(outs) != 0 || e.inserts() != 0 {
		t.Errorf("refused tasks left %v, and inserted objects", outs)
	}
}

// The grace period the Kubernetes example gives covers gcsput's save: SIGTERM (what a
// drain, eviction or preemption sends) in the middle of an upload, and the pod's script
// exits 130, its session saved. How long that takes against terminationGracePeriodSeconds
// is measured and stated in docs/scale-out.md (under 0.5 s in 45 runs), not asserted here:
// a test that timed it would fail on a loaded machine. The Cloud Run job runs the same
// binary under Cloud Run's fixed 10 s.
func TestDeploySIGTERMSaves(t *testing.T) {
	t.Parallel()
	script, doc := containerScript(t, "../../deploy/kubernetes/indexed-job.yaml")
	pod := yamlAt(t, doc, "spec", "template", "spec")
	grace := time.Duration(yamlAt(t, pod, "terminationGracePeriodSeconds").(int)) * time.Second
	c := yamlAt(t, pod, "containers", 0)
	sub := regexp.MustCompile(`\$\((\w+)\)`).ReplaceAllString(yamlAt(t, c, "volumeMounts", 1, "subPathExpr").(string), "$${$1}")
	e := newEngineRun(t, script, " /data ", " DIR/src ", "/state/", "DIR/"+sub+"/")
	n := yamlAt(t, doc, "spec", "completions").(int)
	idx := shard.Of("big", n)
	os.MkdirAll(filepath.Join(e.dir, "split-"+itoa(n), "shard-"+itoa(idx)), 0o755)
	writeFile(t, filepath.Join(e.dir, "src", "big"), 40<<20)
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Object: "archive/big", Phase: fakegcs.PhaseChunk,
		Kind: fakegcs.KindThrottle, BytesPerSecond: 4 << 20, Times: -1, Optional: true})
	cmd := exec.Command("/bin/sh", "-c", e.script) // exec: the shell becomes gcsput, as in the pod
	cmd.Env, cmd.Dir = []string{"PATH=" + filepath.Join(e.dir, "bin") + ":" + os.Getenv("PATH"), "HOME=" + e.dir,
		"STORAGE_EMULATOR_HOST=" + e.srv.Host(), "JOB_COMPLETION_INDEX=" + itoa(idx), "SHARDS=" + k8sEnv(t, c, "SHARDS")}, e.dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if s, ok := e.srv.LastSession("my-bucket", "archive/big"); ok && s.Received >= 1<<20 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the upload of big never got going:\n%s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	// How long the save takes is measured (docs/scale-out.md), not asserted: a loaded
	// machine stretches it. The wait below is only a safety net against a hang.
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("gcsput was still running 2m after SIGTERM: it never saved and exited\n%s", errb.String())
	}
	t.Logf("exit %d %v after SIGTERM (grace %v)", cmd.ProcessState.ExitCode(), time.Since(sent), grace)
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit %d after SIGTERM; want %d (saved)\n%s", code, exitInterrupted, errb.String())
	}
	out, _ := os.ReadFile(filepath.Join(e.dir, "split-"+itoa(n), "shard-"+itoa(idx), "gcsput.ndjson"))
	if !strings.Contains(string(out), `"status":"interrupted"`) || !strings.Contains(string(out), `"saved":true`) {
		t.Errorf("the output holds no saved, interrupted record for big:\n%s", out)
	}
}

// docs/scale-out.md shows an excerpt of the Kubernetes example: every value it shows is
// the example's, so the two cannot drift apart.
func TestDocsDeployExcerpt(t *testing.T) {
	t.Parallel()
	md, err := os.ReadFile("../../docs/scale-out.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindSubmatch(md)
	if m == nil {
		t.Fatal("docs/scale-out.md has no ```yaml excerpt")
	}
	var excerpt map[string]any
	if err := yaml.Unmarshal(m[1], &excerpt); err != nil {
		t.Fatalf("the excerpt: %v", err)
	}
	_, real := containerScript(t, "../../deploy/kubernetes/indexed-job.yaml")
	var walk func(where string, x, y any)
	walk = func(where string, x, y any) {
		switch x := x.(type) {
		case map[string]any:
			ym, _ := y.(map[string]any)
			for k, v := range x {
				walk(where+"."+k, v, ym[k])
			}
		case []any:
			yl, _ := y.([]any)
			for i, v := range x {
				if i >= len(yl) {
					t.Errorf("%s[%d]: in the excerpt, not in indexed-job.yaml", where, i)
					continue
				}
				walk(fmt.Sprintf("%s[%d]", where, i), v, yl[i])
			}
		default:
			if fmt.Sprint(x) != fmt.Sprint(y) {
				t.Errorf("%s: the excerpt says %v, indexed-job.yaml %v", where, x, y)
			}
		}
	}
	walk("", excerpt, real)
}
