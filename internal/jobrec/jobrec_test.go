package jobrec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/upload"
)

// The ID is what report's help documents: the first 16 hex digits of the
// SHA-256 of ["gcsput-job/1", command, sources, destination, N, filters],
// local operands made absolute with their trailing "/" kept; Tree is the
// same with N = 0, so a job split any way has one Tree.
func TestIdentity(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	id := NewIdentity("sync", []string{"tree/"}, "gs://b/p", 4, Filters([]string{"*.go"}, []string{"x"}, []string{`.*\.tmp`}))
	src := filepath.Join(dir, "tree") + "/"
	filters := []string{"include *.go", "exclude x", `exclude-regex .*\.tmp`}
	hash := func(n int) string {
		b, _ := json.Marshal([]any{"gcsput-job/1", "sync", []string{src}, "gs://b/p", n, filters})
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:8])
	}
	if id.ID != hash(4) || id.Tree() != hash(0) || !reflect.DeepEqual(id.Sources, []string{src}) || !reflect.DeepEqual(id.Filters, filters) {
		t.Errorf("identity %+v (tree %s); want id %s, tree %s, sources [%s]", id, id.Tree(), hash(4), hash(0), src)
	}
	if other := NewIdentity("sync", []string{"tree/"}, "gs://b/p", 0, id.Filters); other.Tree() != id.Tree() || other.Shards != 1 || other.ID == id.ID {
		t.Errorf("unsharded: %+v (tree %s); want shards 1, tree %s and another id", other, other.Tree(), id.Tree())
	}
	want := "sync " + src + " -> gs://b/p, 4 shards, --include *.go, --exclude x, --exclude-regex .*\\.tmp (id " + id.ID + ")"
	if got := id.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	many := make([]string, MaxSourcesNamed+3)
	for i := range many {
		many[i] = "gs://b/" + strings.Repeat("x", i+1)
	}
	big := NewIdentity("cp", many, "-", 1, nil)
	if len(big.Sources) != MaxSourcesNamed || big.SourceCount != len(many) || big.Destination != "-" ||
		!strings.Contains(big.String(), " and 3 more -> -, 1 shard (id ") {
		t.Errorf("cp of %d sources: %d named, count %d: %s", len(many), len(big.Sources), big.SourceCount, big)
	}
	var none *Identity
	if !strings.HasPrefix(none.String(), "no job (") {
		t.Errorf("nil identity: %q", none.String())
	}
}

// Of: a result's op follows its ends, a copy's bytes were rewritten on the
// server, not transferred, and a skip has no CRC32C.
func TestOf(t *testing.T) {
	for _, tt := range []struct {
		r    upload.Result
		want File
	}{
		{upload.Result{Source: "a", Dest: "gs://b/a", Status: upload.StatusUploaded, Size: 5, Transferred: 5, CRC32C: 1, Elapsed: time.Second},
			File{Type: "file", Op: "upload", Source: "a", Destination: "gs://b/a", Status: "uploaded", Bytes: 5, Transferred: 5, CRC32C: "AAAAAQ==", Seconds: 1}},
		{upload.Result{Source: "gs://b/a", Dest: "gs://c/a", Status: upload.StatusCopied, Size: 5, Transferred: 5, CRC32C: 1},
			File{Type: "file", Op: "copy", Source: "gs://b/a", Destination: "gs://c/a", Status: "copied", Bytes: 5, Rewritten: 5, CRC32C: "AAAAAQ=="}},
		{upload.Result{Source: "gs://b/a", Dest: "a", Status: upload.StatusSkipped, Size: -1, Note: "exists"},
			File{Type: "file", Op: "download", Source: "gs://b/a", Destination: "a", Status: "skipped", Reason: "exists"}},
		{upload.Result{Dest: "gs://b/gone", Status: upload.StatusDeleted},
			File{Type: "file", Op: "delete", Destination: "gs://b/gone", Status: "deleted"}},
		{upload.Result{Source: "a", Dest: "gs://b/a", Status: upload.StatusInterrupted, Saved: true, Err: errors.New("cut"), SaveErr: errors.New("disk full")},
			File{Type: "file", Op: "upload", Source: "a", Destination: "gs://b/a", Status: "interrupted", Saved: true, Error: "cut", SaveError: "disk full"}},
	} {
		if got := Of(&tt.r); got != tt.want {
			t.Errorf("Of(%+v)\n = %+v\nwant %+v", tt.r, got, tt.want)
		}
	}
}

// Add counts each status, the bytes of what arrived, and the cut-short
// transfers whose state could not be saved.
func TestSummaryAdd(t *testing.T) {
	var s Summary
	for _, f := range []File{
		{Status: "uploaded", Bytes: 10, Transferred: 10},
		{Status: "resumed", Bytes: 20, Transferred: 12},
		{Status: "copied", Bytes: 30, Rewritten: 30},
		{Status: "skipped", Bytes: 40},
		{Status: "failed", Bytes: 50, Transferred: 3, SaveError: "disk full"},
		{Status: "interrupted", Bytes: 60, Transferred: 7, Saved: true},
		{Status: "deleted", Bytes: 70},
		{Status: "moved", Bytes: 80, Transferred: 80},
	} {
		s.Add(f)
	}
	want := Summary{Files: 8, Uploaded: 1, Resumed: 1, Copied: 1, Skipped: 1, Failed: 1, Interrupted: 1, Deleted: 1, Moved: 1,
		Bytes: 10 + 20 + 30 + 80, Transferred: 10 + 12 + 3 + 7 + 80, Rewritten: 30, NotResumable: 1}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("summary\n %+v\nwant %+v", s, want)
	}
}

// Merge adds up the summaries of one job's shards, every count of them,
// and says what is wrong: an output without a summary at its end, failures.
func TestMerge(t *testing.T) {
	dir := t.TempDir()
	job := NewIdentity("cp", []string{"gs://a/**"}, "gs://b/", 2, nil)
	write := func(name string, lines ...any) string {
		var b strings.Builder
		for _, l := range lines {
			j, _ := json.Marshal(l)
			b.Write(append(j, '\n'))
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s0 := write("s0", File{Type: "file", Status: "copied"}, Summary{Type: "summary", Shard: "0/2", Job: job,
		Files: 3, Copied: 2, Moved: 1, Failed: 0, Bytes: 30, Rewritten: 30, Seconds: 2, TransferSeconds: 1.5, NotResumable: 1,
		Concurrency: 8, LeastConcurrency: 5, Refusals: 3})
	s1 := write("s1", Summary{Type: "summary", Shard: "1/2", Job: job,
		Files: 4, Copied: 3, Failed: 1, Bytes: 40, Rewritten: 40, Transferred: 1, Seconds: 5, TransferSeconds: 4.5,
		DeletesWithheld: 6, WithheldBecause: "1 transfer failed", Concurrency: 6, LeastConcurrency: 4, Refusals: 2})
	m := Merge([]string{s0, s1})
	want := Summary{Type: "report", Job: m.Job, Files: 7, Copied: 5, Moved: 1, Failed: 1, Bytes: 70, Rewritten: 70, Transferred: 1,
		Seconds: 5, TransferSeconds: 4.5, NotResumable: 1, DeletesWithheld: 6, WithheldBecause: "1 transfer failed",
		LeastConcurrency: 4, Refusals: 5}
	if !reflect.DeepEqual(m.Summary, want) || m.Outputs != 2 || m.Job == nil || m.Job.ID != job.ID {
		t.Errorf("merged\n %+v\nwant %+v", m.Summary, want)
	}
	if want := []string{"1 transfers failed", "6 deletes withheld (shard 1/2: 1 transfer failed)"}; !reflect.DeepEqual(m.Problems, want) {
		t.Errorf("problems %q, want %q", m.Problems, want)
	}

	cut := write("cut", Summary{Type: "summary", Shard: "1/2", Job: job}, File{Type: "file", Status: "uploaded"})
	m = Merge([]string{s0, cut})
	if len(m.Problems) == 0 || m.Problems[0] != cut+" has no summary at its end: that worker did not finish" {
		t.Errorf("an output cut after its summary: problems %q", m.Problems)
	}
}
