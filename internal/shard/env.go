package shard

import (
	"fmt"
	"strconv"
	"strings"
)

// An engine names the variables that give a task its index and the count.
type engine struct {
	name         string
	index, count string   // variable names; count "" when the engine has none
	more         []string // other variables that shape the index
}

// engines are tried in this order by FromEnv.
var engines = []engine{
	{"Cloud Run jobs", "CLOUD_RUN_TASK_INDEX", "CLOUD_RUN_TASK_COUNT", nil},
	{"Cloud Batch", "BATCH_TASK_INDEX", "BATCH_TASK_COUNT", nil},
	{"Slurm", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", []string{"SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_STEP"}},
	{"Kubernetes Indexed Job", "JOB_COMPLETION_INDEX", "", nil},
}

// FromEnv reads the shard from a batch engine's environment (--shard auto).
// Kubernetes does not export the count, so shards (from --shards N) gives it.
// Under Slurm, shards pins the job's split (see slurmPinned): a task
// re-submitted alone keeps its shard. For Cloud Run and Batch, shards, when
// not 0, must agree with the engine: an execution with another task count
// is refused, not re-split. Exactly one engine's index variable must be set.
// Errors name the variable.
func FromEnv(getenv func(string) string, shards int) (Spec, error) {
	var found []engine
	for _, e := range engines {
		if getenv(e.index) != "" {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return Spec{}, fmt.Errorf("%w: --shard auto: none of CLOUD_RUN_TASK_INDEX, BATCH_TASK_INDEX, SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX is set: run under a batch engine, or give --shard I/N", ErrUsage)
	case 1:
	default:
		return Spec{}, fmt.Errorf("%w: --shard auto: both %s and %s are set: give --shard I/N", ErrUsage, found[0].index, found[1].index)
	}
	e := found[0]
	idx, err := envInt(getenv, e.index)
	if err != nil {
		return Spec{}, err
	}
	if e.name == "Slurm" && shards > 0 {
		return slurmPinned(getenv, idx, shards)
	}
	n, err := engineCount(getenv, e, shards)
	if err != nil {
		return Spec{}, err
	}
	if e.name == "Slurm" {
		if idx, err = slurmIndex(getenv, idx); err != nil {
			return Spec{}, err
		}
	}
	return check(Spec{idx, n}, e.name+"'s "+e.index+" and "+countSource(e))
}

// Describe names the engine variables --shard auto read, with their values
// (`SLURM_ARRAY_TASK_ID="2" SLURM_ARRAY_TASK_COUNT="1" SLURM_ARRAY_TASK_MIN="2"`),
// for messages; "" when no engine's index is set.
func Describe(getenv func(string) string) string {
	var out []string
	for _, e := range engines {
		if getenv(e.index) == "" {
			continue
		}
		for _, v := range append([]string{e.index, e.count}, e.more...) {
			if v != "" && getenv(v) != "" {
				out = append(out, fmt.Sprintf("%s=%q", v, getenv(v)))
			}
		}
	}
	return strings.Join(out, " ")
}

func countSource(e engine) string {
	if e.count == "" {
		return "--shards"
	}
	return e.count
}

// engineCount is the engine's count, checked against --shards when given.
func engineCount(getenv func(string) string, e engine, shards int) (int, error) {
	if e.count == "" {
		if shards < 1 {
			return 0, fmt.Errorf("%w: --shard auto under a Kubernetes Indexed Job (JOB_COMPLETION_INDEX is set) needs --shards N, the Job's completions: Kubernetes does not export it", ErrUsage)
		}
		return shards, nil
	}
	n, err := envInt(getenv, e.count)
	if err != nil {
		return 0, err
	}
	if shards != 0 && shards != n {
		return 0, fmt.Errorf("%w: --shards %d disagrees with %s=%d: this run has another task count than the job's, and would split the tree differently; to re-run one task alone, give it --shard I/%d in place of --shard auto", ErrUsage, shards, e.count, n, shards)
	}
	return n, nil
}

// slurmPinned is the shard of a Slurm task when --shards N pins the job's
// split: SLURM_ARRAY_TASK_ID is the shard index itself. A task re-submitted
// on its own (sbatch --array=2) sees SLURM_ARRAY_TASK_COUNT=1 and
// SLURM_ARRAY_TASK_MIN=2, so the array's own numbers describe the
// re-submission, not the job; its ID is the one thing that stays. A whole
// array of N tasks must then be 0 to N-1, step 1.
func slurmPinned(getenv func(string) string, id, shards int) (Spec, error) {
	fix := fmt.Sprintf("with --shards %d, SLURM_ARRAY_TASK_ID is the shard index: submit the job as --array=0-%d, and re-run task I alone with --array=I", shards, shards-1)
	if id >= shards {
		return Spec{}, fmt.Errorf("%w: SLURM_ARRAY_TASK_ID=%d is not below --shards %d: %s", ErrUsage, id, shards, fix)
	}
	if getenv("SLURM_ARRAY_TASK_COUNT") == strconv.Itoa(shards) &&
		(getenv("SLURM_ARRAY_TASK_MIN") != "0" || getenv("SLURM_ARRAY_TASK_STEP") != "" && getenv("SLURM_ARRAY_TASK_STEP") != "1") {
		return Spec{}, fmt.Errorf("%w: an array of %d tasks with SLURM_ARRAY_TASK_MIN=%q and SLURM_ARRAY_TASK_STEP=%q: %s",
			ErrUsage, shards, getenv("SLURM_ARRAY_TASK_MIN"), getenv("SLURM_ARRAY_TASK_STEP"), fix)
	}
	return Spec{id, shards}, nil
}

// slurmIndex turns SLURM_ARRAY_TASK_ID into a 0-based index: arrays may start
// anywhere (--array=1-16) and step (--array=0-30:2).
func slurmIndex(getenv func(string) string, id int) (int, error) {
	lo, err := envInt(getenv, "SLURM_ARRAY_TASK_MIN")
	if err != nil {
		return 0, err
	}
	step := 1
	if getenv("SLURM_ARRAY_TASK_STEP") != "" {
		if step, err = envInt(getenv, "SLURM_ARRAY_TASK_STEP"); err != nil {
			return 0, err
		}
	}
	if step < 1 || id < lo || (id-lo)%step != 0 {
		return 0, fmt.Errorf("%w: SLURM_ARRAY_TASK_ID=%d is not in the array that SLURM_ARRAY_TASK_MIN=%d and step %d describe (use an --array range such as 0-15)", ErrUsage, id, lo, step)
	}
	return (id - lo) / step, nil
}

func envInt(getenv func(string) string, name string) (int, error) {
	n, ok := digits(getenv(name))
	if !ok {
		return 0, fmt.Errorf("%w: %s=%q: want a whole number of 0 or more, digits only", ErrUsage, name, getenv(name))
	}
	return n, nil
}

// digits reads a decimal number of ASCII digits and nothing else: no sign, no space
// (strconv.Atoi takes "+1"), so a padded or signed value is refused, not guessed at.
func digits(s string) (int, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
