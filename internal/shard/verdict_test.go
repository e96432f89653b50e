package shard

import (
	"fmt"
	"slices"
	"testing"
)

// Verdict keeps the job most outputs name, names each output of another,
// and every shard of the split that is missing, run twice or of another
// split.
func TestVerdict(t *testing.T) {
	out := func(file, shard, id string) Output {
		return Output{File: file, Shard: shard, JobID: id, Job: "job " + id}
	}
	for _, tc := range []struct {
		name     string
		outs     []Output
		ours     []string
		problems []string
	}{
		{"complete", []Output{out("a", "0/2", "J"), out("b", "1/2", "J")}, []string{"a", "b"}, nil},
		{"another job", []Output{out("a", "0/2", "J"), out("x", "1/2", "K"), out("b", "1/2", "J")}, []string{"a", "b"},
			[]string{"x is not an output of this job: it names job K; the other 2 name job J"}},
		{"twice and missing", []Output{out("a", "0/3", "J"), out("b", "0/3", "J"), out("c", "1/3", "J")}, []string{"a", "b", "c"},
			[]string{"shard 0/3 ran 2 times: a, b", "shard 2/3 is missing"}},
		{"another split", []Output{out("a", "0/3", "J"), out("c", "1/4", "J")}, []string{"a", "c"},
			[]string{"shard 0/3 belongs to another split than /4", "shard 0/4 is missing", "shard 2/4 is missing", "shard 3/4 is missing"}},
		{"no job named", []Output{out("a", "", ""), out("b", "", "")}, []string{"a", "b"}, nil},
	} {
		ours, problems := Verdict(tc.outs)
		var files []string
		for _, o := range ours {
			files = append(files, o.File)
		}
		if !slices.Equal(files, tc.ours) || !slices.Equal(problems, tc.problems) {
			t.Errorf("%s: ours %q, problems %q\nwant %q, %q", tc.name, files, problems, tc.ours, tc.problems)
		}
	}
}

// A split of a billion shards costs no more than its files: ten missing are
// named, then the count.
func TestVerdictBoundsTheMissing(t *testing.T) {
	_, problems := Verdict([]Output{{File: "a", Shard: "0/1000000000"}})
	if len(problems) != 11 || problems[10] != fmt.Sprintf("%d shards of %d are missing in all", 999999999, 1000000000) {
		t.Fatalf("problems: %d, last %q", len(problems), problems[len(problems)-1])
	}
}
