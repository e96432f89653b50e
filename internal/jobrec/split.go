package jobrec

import (
	"errors"
	"fmt"
	"os"

	"github.com/gcsput/gcsput/internal/shard"
	"github.com/gcsput/gcsput/internal/state"
)

// CheckSplit keeps a job's split in the state directory: a sharded run
// records N under the job's tree (its sources, destination and filters, not
// N), and a later --shard auto that finds another N there is refused. A
// batch engine describes a task re-run on its own as an array of its own
// size (Slurm's sbatch --array=2 gives SLURM_ARRAY_TASK_COUNT=1), so auto
// would take the whole tree as shard 0/1 and not resume the task's sessions.
// An explicit --shard I/N is the operator's word: it re-splits on purpose,
// with a warning, and is recorded. spec is --shard as given ("auto", "I/N"
// or ""), sh what it gave; the error is the refusal, for the command to
// report as a usage error.
func CheckSplit(stateDir string, id *Identity, spec string, sh shard.Spec, warn func(string)) error {
	if id == nil || stateDir == "" || spec == "" {
		return nil
	}
	st, err := state.Open(stateDir)
	if err != nil {
		return nil // the transfer's own Open reports it
	}
	rec, ok := st.LoadSplit(id.Tree())
	if ok && rec.Shards != sh.Count {
		if spec == "auto" {
			return errors.New(splitRefusal(stateDir, rec, sh))
		}
		warn(fmt.Sprintf("%s recorded this job split into %d shards; --shard %s splits it into %d", stateDir, rec.Shards, spec, sh.Count))
	}
	if sh.Enabled() && (!ok || rec.Shards != sh.Count) {
		if err := st.SaveSplit(id.Tree(), state.Split{Shards: sh.Count, Job: id.String()}); err != nil {
			warn(fmt.Sprintf("the job's split is not recorded in %s: %v", stateDir, err))
		}
	}
	return nil
}

// splitRefusal says what auto found, what the state directory knows, and
// how to re-run one task.
func splitRefusal(stateDir string, rec state.Split, sh shard.Spec) string {
	return fmt.Sprintf("--shard auto gives shard %s (%s), but %s recorded this job split into %d shards: %s. "+
		"A task re-run on its own must keep the job's split, or it takes the wrong share and none of its saved sessions: "+
		"give it --shard I/%d, or pin the count with --shard auto --shards %d (under Slurm the task's SLURM_ARRAY_TASK_ID is then "+
		"the shard index: sbatch --array=I). To split the job anew on purpose, give --shard I/N",
		sh, shard.Describe(os.Getenv), stateDir, rec.Shards, rec.Job, rec.Shards, rec.Shards)
}
