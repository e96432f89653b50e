package jobrec

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/gcsput/gcsput/internal/shard"
)

// Merged is the verdict on the --json outputs of one job's workers: their
// summaries added up, and what is wrong (an output missing its summary,
// one of another job, a shard missing or twice, transfers that failed).
type Merged struct {
	Summary
	Outputs  int      `json:"outputs"`
	Problems []string `json:"problems,omitempty"`
}

// Merge reads each output's summary, asks shard.Verdict which are the
// job's and what is wrong, and adds up the job's counts.
func Merge(files []string) Merged {
	m := Merged{Summary: Summary{Type: "report"}, Outputs: len(files)}
	var outs []shard.Output
	sums := map[string]Summary{}
	for _, f := range files {
		sum, err := LastSummary(f)
		if err != nil {
			m.Problems = append(m.Problems, err.Error())
			continue
		}
		o := shard.Output{File: f, Shard: sum.Shard, Job: fmt.Sprint(sum.Job)}
		if sum.Job != nil {
			o.JobID = sum.Job.ID
		}
		outs, sums[f] = append(outs, o), sum
	}
	ours, problems := shard.Verdict(outs)
	m.Problems = append(m.Problems, problems...)
	for _, o := range ours {
		if m.Job == nil {
			m.Job = sums[o.File].Job
		}
		m.add(sums[o.File])
	}
	if m.Failed > 0 {
		m.Problems = append(m.Problems, fmt.Sprintf("%d transfers failed", m.Failed))
	}
	if m.Interrupted > 0 {
		m.Problems = append(m.Problems, fmt.Sprintf("%d transfers were interrupted", m.Interrupted))
	}
	for _, o := range ours {
		if sum := sums[o.File]; sum.DeletesWithheld > 0 {
			where := sum.WithheldBecause
			if sum.Shard != "" {
				where = "shard " + sum.Shard + ": " + where
			}
			m.Problems = append(m.Problems, fmt.Sprintf("%d deletes withheld (%s)", sum.DeletesWithheld, where))
		}
	}
	return m
}

// add counts one output's summary into the merged one; the workers ran at
// once, so the job took as long as the longest. Each worker had its own
// window on the bucket: their refusals add up, the least concurrency is
// the least of any, and the concurrency at the end, one worker's, is not
// merged.
func (m *Merged) add(sum Summary) {
	s := &m.Summary
	s.Files += sum.Files
	s.Uploaded += sum.Uploaded
	s.Resumed += sum.Resumed
	s.Restarted += sum.Restarted
	s.Downloaded += sum.Downloaded
	s.Moved += sum.Moved
	s.Copied += sum.Copied
	s.Skipped += sum.Skipped
	s.Failed += sum.Failed
	s.Interrupted += sum.Interrupted
	s.Deleted += sum.Deleted
	s.Bytes += sum.Bytes
	s.Transferred += sum.Transferred
	s.Rewritten += sum.Rewritten
	s.NotResumable += sum.NotResumable
	s.Seconds = max(s.Seconds, sum.Seconds)
	s.TransferSeconds = max(s.TransferSeconds, sum.TransferSeconds)
	s.DeletesWithheld += sum.DeletesWithheld
	if sum.WithheldBecause != "" && !strings.Contains(s.WithheldBecause, sum.WithheldBecause) {
		s.WithheldBecause = strings.TrimPrefix(s.WithheldBecause+"; "+sum.WithheldBecause, "; ")
	}
	s.Refusals += sum.Refusals
	if sum.LeastConcurrency > 0 && (s.LeastConcurrency == 0 || sum.LeastConcurrency < s.LeastConcurrency) {
		s.LeastConcurrency = sum.LeastConcurrency
	}
}

// LastSummary returns the summary line of one --json output: its last
// line, which a worker writes when it ends.
func LastSummary(path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	var last Summary
	found := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var rec Summary
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Type == "summary" {
			last, found = rec, true
		} else {
			found = false // a record after the summary: not the end of a run
		}
	}
	if err := sc.Err(); err != nil {
		return Summary{}, fmt.Errorf("%s: %w", path, err)
	}
	if !found {
		return Summary{}, fmt.Errorf("%s has no summary at its end: that worker did not finish", path)
	}
	return last, nil
}
