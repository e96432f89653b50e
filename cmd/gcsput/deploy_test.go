package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/gcsput/gcsput/fakegcs"
)

// containerArgs returns command+args of the first container found in a
// Kubernetes or Cloud Run manifest, parsed with a real YAML library.
func containerArgs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var find func(v any) []string
	find = func(v any) []string {
		switch v := v.(type) {
		case map[string]any:
			if cs, ok := v["containers"].([]any); ok && len(cs) > 0 {
				c := cs[0].(map[string]any)
				var out []string
				for _, k := range []string{"command", "args"} {
					for _, a := range c[k].([]any) {
						out = append(out, a.(string))
					}
				}
				return out
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
	args := find(doc)
	if len(args) == 0 || args[0] != "gcsput" {
		t.Fatalf("%s: no gcsput container: %q", path, args)
	}
	return args[1:]
}

// slurmArgs returns the gcsput command line of the sbatch script.
func slurmArgs(t *testing.T, path string, env map[string]string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "exec gcsput "); ok {
			line = os.Expand(strings.ReplaceAll(line, `"`, ""), func(k string) string { return env[k] })
			return strings.Fields(line)
		}
	}
	t.Fatalf("%s: no 'exec gcsput' line", path)
	return nil
}

// Each deploy/ example's command line is one gcsput accepts, and it runs: the
// example's paths are swapped for a local tree and its bucket is a fakegcs
// one, under the engine's variables.
func TestDeployExamplesRun(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		name string
		env  map[string]string
		args func(env map[string]string) []string
	}{
		{"kubernetes", map[string]string{"JOB_COMPLETION_INDEX": "1"},
			func(map[string]string) []string { return containerArgs(t, "../../deploy/kubernetes/indexed-job.yaml") }},
		{"cloudrun", map[string]string{"CLOUD_RUN_TASK_INDEX": "5", "CLOUD_RUN_TASK_COUNT": "8"},
			func(map[string]string) []string { return containerArgs(t, "../../deploy/cloudrun/job.yaml") }},
		{"slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "16", "HOME": home},
			func(env map[string]string) []string {
				return slurmArgs(t, "../../deploy/slurm/gcsput-array.sbatch", env)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"JOB_COMPLETION_INDEX", "CLOUD_RUN_TASK_INDEX", "CLOUD_RUN_TASK_COUNT", "BATCH_TASK_INDEX", "SLURM_ARRAY_TASK_ID"} {
				t.Setenv(k, "")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"my-bucket"}})
			dir := t.TempDir()
			for i := range 40 {
				writeFile(t, filepath.Join(dir, "src", "f"+itoa(i)), 10+i)
			}
			args := tc.args(tc.env)
			for i, a := range args {
				switch {
				case i > 0 && args[i-1] == "--state-dir":
					args[i] = filepath.Join(dir, "state")
				case strings.HasPrefix(a, "/"):
					args[i] = filepath.Join(dir, "src")
				}
			}
			r := runIn(context.Background(), false, append(args, "--endpoint", srv.URL())...)
			if r.code != 0 {
				t.Fatalf("gcsput %q: exit %d\n%s", args, r.code, r.stderr)
			}
			_, sum := jsonLines(t, r.stdout)
			if sum.Shard == "" || sum.Uploaded == 0 || sum.Uploaded >= 40 {
				t.Errorf("gcsput %q: summary %+v: want one shard's part of 40 files", args, sum)
			}
		})
	}
}
