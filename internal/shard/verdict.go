package shard

import (
	"fmt"
	"slices"
	"strings"
)

// Output is one worker's --json output as 'gcsput report' reads it: its
// file, the shard its summary names ("I/N"; "" when not sharded) and the
// job it names (JobID "" for a gcsput from before jobs were named; Job is
// how messages name it).
type Output struct {
	File, Shard, JobID, Job string
}

// maxMissingNamed bounds the missing shards a verdict names one by one.
const maxMissingNamed = 10

// Verdict picks the job that most outputs name (the first of a tie) and
// checks that its shards 0..N-1 each ran exactly once. ours are that job's
// outputs, in order; problems say what is wrong, each naming its file or
// shard: an output of another job, a shard of another split, one run twice,
// the ones missing. When no output names a job (an older gcsput), all are
// merged, on their shards alone.
func Verdict(outs []Output) (ours []Output, problems []string) {
	ours, problems = oneJob(outs)
	shards := map[string][]string{} // "I/N" → the files that ran it
	count := 0
	for _, o := range ours {
		if o.Shard != "" {
			shards[o.Shard] = append(shards[o.Shard], o.File)
			if sp, err := Parse(o.Shard); err == nil {
				count = max(count, sp.Count)
			}
		}
	}
	return ours, append(problems, shardProblems(shards, count)...)
}

// oneJob returns the outputs of the job most name, and a problem for each
// output of another job or of none.
func oneJob(outs []Output) ([]Output, []string) {
	votes := map[string]int{}
	job := -1
	for i, o := range outs {
		if o.JobID == "" {
			continue
		}
		votes[o.JobID]++
		if job < 0 || votes[o.JobID] > votes[outs[job].JobID] {
			job = i
		}
	}
	if job < 0 {
		return outs, nil
	}
	var ours []Output
	var odd []string
	for _, o := range outs {
		if o.JobID == outs[job].JobID {
			ours = append(ours, o)
			continue
		}
		odd = append(odd, fmt.Sprintf("%s is not an output of this job: it names %s; the other %d name %s",
			o.File, o.Job, votes[outs[job].JobID], outs[job].Job))
	}
	return ours, odd
}

// shardProblems checks that shards 0..count-1 each ran exactly once. The
// count comes from the files, so the work is bounded by the files, not by
// it: a summary claiming "0/999999999" costs no more than any other.
func shardProblems(shards map[string][]string, count int) []string {
	var out []string
	ran := map[int]bool{} // the indices of this split that ran
	specs := make([]string, 0, len(shards))
	for s := range shards {
		specs = append(specs, s)
	}
	slices.Sort(specs)
	for _, spec := range specs {
		sp, err := Parse(spec)
		switch {
		case err != nil || sp.Count != count:
			out = append(out, fmt.Sprintf("shard %s belongs to another split than /%d", spec, count))
			continue
		case len(shards[spec]) > 1:
			out = append(out, fmt.Sprintf("shard %s ran %d times: %s", spec, len(shards[spec]), strings.Join(shards[spec], ", ")))
		}
		ran[sp.Index] = true
	}
	named := 0
	for i := 0; i < count && named < maxMissingNamed; i++ {
		if !ran[i] {
			out = append(out, fmt.Sprintf("shard %d/%d is missing", i, count))
			named++
		}
	}
	if missing := count - len(ran); missing > named {
		out = append(out, fmt.Sprintf("%d shards of %d are missing in all", missing, count))
	}
	return out
}
