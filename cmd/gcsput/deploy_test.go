package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

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
	e.slurm, e.outputs = &sb, "gcsput-*.ndjson"
	n := slurmShards(t, sb)
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
	b, _ := os.ReadFile(filepath.Join(e.dir, "gcsput-3.ndjson"))
	if got := strings.Count(string(b), `"type":"summary"`); got != 2 {
		t.Errorf("gcsput-3.ndjson holds %d summaries after a requeue, want 2 (appended):\n%s", got, b)
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
	return n
}

func TestDeployKubernetesIndexedJob(t *testing.T) {
	t.Parallel()
	script, doc := containerScript(t, "../../deploy/kubernetes/indexed-job.yaml")
	n := doc["spec"].(map[string]any)["completions"].(int)
	if !strings.Contains(script, "--shard auto --shards "+itoa(n)+" ") {
		t.Fatalf("the script must pin --shards to completions (%d): %s", n, script)
	}
	// Each pod sees its own shard-I subdirectory of the state claim as /state.
	e := newEngineRun(t, script, " /data ", " DIR/src ", "/state/", "DIR/shard-$JOB_COMPLETION_INDEX/")
	e.outputs = "shard-*/gcsput.ndjson"
	for i := range n {
		os.MkdirAll(filepath.Join(e.dir, "shard-"+itoa(i)), 0o755)
	}
	// Kubernetes retries a failed index with the same JOB_COMPLETION_INDEX.
	e.rerunOne(n, 2, func(i int) []string { return []string{"JOB_COMPLETION_INDEX=" + itoa(i)} }, []string{"JOB_COMPLETION_INDEX=2"})
}

func TestDeployCloudRunJob(t *testing.T) {
	t.Parallel()
	script, doc := containerScript(t, "../../deploy/cloudrun/job.yaml")
	n := doc["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["taskCount"].(int)
	if !strings.Contains(script, `--shard "$i/`+itoa(n)+`"`) {
		t.Fatalf("the script must name shards of taskCount (%d): %s", n, script)
	}
	e := newEngineRun(t, script, "/mnt/data", "DIR/src", "/out/", "DIR/")
	e.outputs = "gcsput-*.ndjson"
	full := func(i int) []string {
		return []string{"CLOUD_RUN_TASK_INDEX=" + itoa(i), "CLOUD_RUN_TASK_COUNT=" + itoa(n)}
	}
	// gcloud run jobs execute --tasks=1 --update-env-vars=SHARD=2: index 0 of 1.
	e.rerunOne(n, 2, full, []string{"CLOUD_RUN_TASK_INDEX=0", "CLOUD_RUN_TASK_COUNT=1", "SHARD=2"})
}
