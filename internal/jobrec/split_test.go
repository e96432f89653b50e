package jobrec

import (
	"strings"
	"testing"

	"github.com/gcsput/gcsput/internal/shard"
)

// A job's split is recorded by its first sharded run; a later --shard auto
// that gives another count is refused with the recorded one, and an
// explicit --shard I/N re-splits with a warning and is recorded in turn.
func TestCheckSplit(t *testing.T) {
	dir := t.TempDir()
	id := NewIdentity("cp", []string{t.TempDir()}, "gs://b/p", 4, nil)
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	if err := CheckSplit(dir, id, "1/4", shard.Spec{Index: 1, Count: 4}, warn); err != nil || len(warned) != 0 {
		t.Fatalf("first run: %v, warnings %q", err, warned)
	}
	err := CheckSplit(dir, id, "auto", shard.Spec{Index: 0, Count: 1}, warn)
	if err == nil || !strings.Contains(err.Error(), "recorded this job split into 4 shards") || !strings.Contains(err.Error(), "give it --shard I/4") {
		t.Errorf("auto with another count: %v", err)
	}
	if err := CheckSplit(dir, id, "2/8", shard.Spec{Index: 2, Count: 8}, warn); err != nil || len(warned) != 1 || !strings.Contains(warned[0], "--shard 2/8 splits it into 8") {
		t.Errorf("explicit re-split: %v, warnings %q", err, warned)
	}
	if err := CheckSplit(dir, id, "auto", shard.Spec{Index: 3, Count: 8}, warn); err != nil {
		t.Errorf("auto with the count recorded by the re-split: %v", err)
	}
	if err := CheckSplit(dir, id, "", shard.Spec{}, warn); err != nil {
		t.Errorf("no --shard: %v", err)
	}
}
