package shard

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Spec{"0/1": {0, 1}, "3/4": {3, 4}, "0/4": {0, 4}} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "4/4", "-1/4", "1/0", "a/b", "1", "1/2/3", " 1/2"} {
		if _, err := Parse(in); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "--shard") {
			t.Errorf("Parse(%q): err %v, want a usage error naming --shard", in, err)
		}
	}
}

// The hash is as documented: FNV-1a 64 (the published test vector for
// "a") mixed by fmix64 (MurmurHash3's, whose value for 1 is pinned here),
// so that a worker built from another version splits the same way.
func TestOfIsFNV1a64Mixed(t *testing.T) {
	if got := fmix64(1); got != 0xb456bcfc34c2cb2c {
		t.Fatalf("fmix64(1) = %#x", got)
	}
	const fnvA = 0xaf63dc4c8601ec8c
	for _, n := range []int{1, 2, 3, 4, 7, 1000} {
		if got, want := Of("a", n), int(fmix64(fnvA)%uint64(n)); got != want {
			t.Fatalf("Of(a, %d) = %d, want %d", n, got, want)
		}
	}
}

// Names that differ only in letters equal modulo 4 ("a", "e", "i", …) used
// to share one shard of 4 (FNV-1a mod a power of two sees only each byte's
// low bits): they spread now. So do names that differ only at the end.
func TestNamesEqualModFourSpread(t *testing.T) {
	seen := map[int]bool{}
	for _, c := range "aeimquy" {
		seen[Of(strings.Repeat(string(c), 3), 4)] = true
	}
	if len(seen) < 3 {
		t.Errorf("aaa, eee, iii, … fall in %d of 4 shards", len(seen))
	}
	counts := make([]int, 4)
	for i := range 400 {
		counts[Of(fmt.Sprintf("p/many/d000/f%03d", i), 4)]++
	}
	for s, c := range counts {
		if c < 70 || c > 130 {
			t.Errorf("400 names ending in a number: shard %d has %d (%v)", s, c, counts)
		}
	}
}

// Every path is owned by exactly one of N shards, and the split is even
// enough to be useful.
func TestEveryPathInExactlyOneShard(t *testing.T) {
	const n, files = 4, 2000
	counts := make([]int, n)
	for f := range files {
		p := fmt.Sprintf("dir%d/file%04d.dat", f%13, f)
		owners := 0
		for i := range n {
			if (Spec{i, n}).Owns(p) {
				owners++
				counts[i]++
			}
		}
		if owners != 1 {
			t.Fatalf("%s has %d owners", p, owners)
		}
	}
	for i, c := range counts {
		if c < files/n/2 {
			t.Errorf("shard %d got %d of %d files: %v", i, c, files, counts)
		}
	}
	if !(Spec{}).Owns("x") || (Spec{}).Enabled() || (Spec{}).String() != "" {
		t.Error("the zero Spec must take everything")
	}
}

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestFromEnv(t *testing.T) {
	cases := []struct {
		name   string
		getenv func(string) string
		shards int
		want   Spec
	}{
		{"cloud run", env("CLOUD_RUN_TASK_INDEX", "2", "CLOUD_RUN_TASK_COUNT", "5"), 0, Spec{2, 5}},
		{"cloud run, --shards agrees", env("CLOUD_RUN_TASK_INDEX", "0", "CLOUD_RUN_TASK_COUNT", "5"), 5, Spec{0, 5}},
		{"batch", env("BATCH_TASK_INDEX", "7", "BATCH_TASK_COUNT", "8"), 0, Spec{7, 8}},
		{"slurm from 0", env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_COUNT", "4"), 0, Spec{3, 4}},
		{"slurm from 1", env("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_COUNT", "16"), 0, Spec{0, 16}},
		{"slurm with step", env("SLURM_ARRAY_TASK_ID", "6", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_STEP", "2", "SLURM_ARRAY_TASK_COUNT", "4"), 0, Spec{3, 4}},
		{"kubernetes", env("JOB_COMPLETION_INDEX", "9"), 10, Spec{9, 10}},
	}
	for _, tc := range cases {
		got, err := FromEnv(tc.getenv, tc.shards)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestFromEnvRefusesBadValues(t *testing.T) {
	cases := []struct {
		name   string
		getenv func(string) string
		shards int
		names  string // the variable or flag the error must name
	}{
		{"nothing set", env(), 0, "CLOUD_RUN_TASK_INDEX"},
		{"two engines", env("CLOUD_RUN_TASK_INDEX", "0", "CLOUD_RUN_TASK_COUNT", "2", "BATCH_TASK_INDEX", "0"), 0, "BATCH_TASK_INDEX"},
		{"missing count", env("CLOUD_RUN_TASK_INDEX", "0"), 0, "CLOUD_RUN_TASK_COUNT"},
		{"not a number", env("BATCH_TASK_INDEX", "x", "BATCH_TASK_COUNT", "2"), 0, "BATCH_TASK_INDEX"},
		{"negative", env("BATCH_TASK_INDEX", "-1", "BATCH_TASK_COUNT", "2"), 0, "BATCH_TASK_INDEX"},
		{"index past count", env("BATCH_TASK_INDEX", "2", "BATCH_TASK_COUNT", "2"), 0, "BATCH_TASK_COUNT"},
		{"zero count", env("CLOUD_RUN_TASK_INDEX", "0", "CLOUD_RUN_TASK_COUNT", "0"), 0, "CLOUD_RUN_TASK_COUNT"},
		{"--shards disagrees", env("CLOUD_RUN_TASK_INDEX", "0", "CLOUD_RUN_TASK_COUNT", "4"), 3, "--shards"},
		{"kubernetes without --shards", env("JOB_COMPLETION_INDEX", "0"), 0, "--shards"},
		{"kubernetes past --shards", env("JOB_COMPLETION_INDEX", "4"), 4, "JOB_COMPLETION_INDEX"},
		{"slurm without min", env("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "4"), 0, "SLURM_ARRAY_TASK_MIN"},
		{"slurm below min", env("SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_COUNT", "4"), 0, "SLURM_ARRAY_TASK_ID"},
		{"slurm off step", env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_STEP", "2", "SLURM_ARRAY_TASK_COUNT", "4"), 0, "SLURM_ARRAY_TASK_ID"},
	}
	for _, tc := range cases {
		_, err := FromEnv(tc.getenv, tc.shards)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.names) {
			t.Errorf("%s: err %v, want a usage error naming %s", tc.name, err, tc.names)
		}
	}
}

// A task re-run on its own sees an engine environment of its own: Slurm's
// sbatch --array=2 gives an array of one task starting at 2; a Cloud Run
// execution with --tasks=1 gives index 0 of 1. With the job's count pinned
// (--shards N) the re-run keeps its shard, or is refused with how to re-run
// it; it never becomes shard 0/1, the whole tree.
func TestFromEnvRerunOfOneTask(t *testing.T) {
	slurm := func(id, lo, hi, count string) func(string) string {
		return env("SLURM_ARRAY_TASK_ID", id, "SLURM_ARRAY_TASK_MIN", lo, "SLURM_ARRAY_TASK_MAX", hi,
			"SLURM_ARRAY_TASK_COUNT", count, "SLURM_ARRAY_TASK_STEP", "1")
	}
	for _, tc := range []struct {
		name   string
		getenv func(string) string
		shards int
		want   Spec
		err    string // a fragment of the refusal; "" when want is the answer
	}{
		{"slurm, the whole array 0-15", slurm("2", "0", "15", "16"), 16, Spec{2, 16}, ""},
		{"slurm, sbatch --array=2", slurm("2", "2", "2", "1"), 16, Spec{2, 16}, ""},
		{"slurm, sbatch --array=2,5", slurm("5", "2", "5", "2"), 16, Spec{5, 16}, ""},
		{"slurm, a requeued task", slurm("15", "0", "15", "16"), 16, Spec{15, 16}, ""},
		{"slurm, task past the count", slurm("16", "16", "16", "1"), 16, Spec{}, "SLURM_ARRAY_TASK_ID=16 is not below --shards 16: with --shards 16, SLURM_ARRAY_TASK_ID is the shard index: submit the job as --array=0-15, and re-run task I alone with --array=I"},
		{"slurm, an array 1-16", slurm("3", "1", "16", "16"), 16, Spec{}, `an array of 16 tasks with SLURM_ARRAY_TASK_MIN="1"`},
		{"slurm unpinned, sbatch --array=2 (what the state check is for)", slurm("2", "2", "2", "1"), 0, Spec{0, 1}, ""},
		{"cloud run, the whole job", env("CLOUD_RUN_TASK_INDEX", "2", "CLOUD_RUN_TASK_COUNT", "8"), 8, Spec{2, 8}, ""},
		{"cloud run, a retried task", env("CLOUD_RUN_TASK_INDEX", "2", "CLOUD_RUN_TASK_COUNT", "8", "CLOUD_RUN_TASK_ATTEMPT", "1"), 8, Spec{2, 8}, ""},
		{"cloud run, execute --tasks=1", env("CLOUD_RUN_TASK_INDEX", "0", "CLOUD_RUN_TASK_COUNT", "1"), 8, Spec{}, "--shards 8 disagrees with CLOUD_RUN_TASK_COUNT=1: this run has another task count than the job's, and would split the tree differently; to re-run one task alone, give it --shard I/8"},
		{"batch, a job of one task", env("BATCH_TASK_INDEX", "0", "BATCH_TASK_COUNT", "1"), 4, Spec{}, "give it --shard I/4"},
		{"kubernetes, index 2 retried", env("JOB_COMPLETION_INDEX", "2"), 4, Spec{2, 4}, ""},
	} {
		got, err := FromEnv(tc.getenv, tc.shards)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		case tc.err != "" && (!errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err %v, want one with %q", tc.name, err, tc.err)
		}
	}
}

func TestDescribe(t *testing.T) {
	got := Describe(env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_MIN", "2", "SLURM_ARRAY_TASK_COUNT", "1", "HOME", "/x"))
	if want := `SLURM_ARRAY_TASK_ID="2" SLURM_ARRAY_TASK_COUNT="1" SLURM_ARRAY_TASK_MIN="2"`; got != want {
		t.Errorf("Describe = %s, want %s", got, want)
	}
	if got := Describe(env("JOB_COMPLETION_INDEX", "1\n")); got != `JOB_COMPLETION_INDEX="1\n"` {
		t.Errorf("Describe = %s", got)
	}
}

// An index or count is digits and nothing else: ' 1' and '+1' are not read as 1 (a
// template that pads or signs its numbers is a setup error to see, not to guess at).
func TestNumbersAreDigitsOnly(t *testing.T) {
	for _, v := range []string{" 1", "+1", "1 ", "1\n", "0x1", "١"} {
		_, err := FromEnv(env("JOB_COMPLETION_INDEX", v), 4)
		want := fmt.Sprintf("JOB_COMPLETION_INDEX=%q: want a whole number of 0 or more", v)
		if !errors.Is(err, ErrUsage) || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("JOB_COMPLETION_INDEX=%q: err %v; want a usage error %q", v, err, want)
		}
	}
	if _, err := FromEnv(env("CLOUD_RUN_TASK_INDEX", "0", "CLOUD_RUN_TASK_COUNT", "+4"), 0); !errors.Is(err, ErrUsage) || !strings.Contains(fmt.Sprint(err), `CLOUD_RUN_TASK_COUNT="+4"`) {
		t.Errorf("CLOUD_RUN_TASK_COUNT=+4: err %v; want a usage error naming it", err)
	}
	for _, in := range []string{"+1/4", "1/+4", "1/ 4", "1 /4"} {
		if _, err := Parse(in); !errors.Is(err, ErrUsage) {
			t.Errorf("Parse(%q): err %v, want a usage error", in, err)
		}
	}
}
