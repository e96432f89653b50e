package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// A bucket's refusals are reported: the --json summary counts them with the window they
// left (the requests in flight at once), the --log has a "concurrency" line for each
// change, and the bar says "N refused, M at once". Three refusals (two 429s, a 503) of
// the first writes at -j 8: the window, 8 at the start, is cut once per window of
// requests, and every file arrives.
func TestRefusalsReportedWithConcurrency(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Faults: []fakegcs.Fault{
		{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 429, Times: 2},
		{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 503, Skip: 2},
	}})
	dir := t.TempDir()
	want := map[string][]byte{}
	for i := range 12 {
		rel := fmt.Sprintf("f%02d", i)
		want[rel] = writeFile(t, filepath.Join(dir, "src", rel), 1000+i)
	}
	log := filepath.Join(dir, "events.ndjson")
	r := runIn(context.Background(), true, "cp", "-r", "-j", "8", "--json", "--log", log, "--endpoint", srv.URL(),
		"--state-dir", filepath.Join(dir, "state"), fastRetry, filepath.Join(dir, "src"), "gs://bkt/x/")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for rel, data := range want {
		if got, _, err := srv.Object("bkt", "x/src/"+rel); err != nil || string(got) != string(data) {
			t.Fatalf("%s: %d bytes, %v", rel, len(got), err)
		}
	}
	_, sum := jsonLines(t, r.stdout)
	if sum.Refusals != 3 || sum.LeastConcurrency < 1 || sum.LeastConcurrency >= 8 || sum.Concurrency < sum.LeastConcurrency || sum.Concurrency > 8 {
		t.Fatalf("summary: %d refusals, concurrency %d (least %d); want 3 refusals, a window cut below 8, at most 8", sum.Refusals, sum.Concurrency, sum.LeastConcurrency)
	}
	if !strings.Contains(r.stderr, "3 refused, ") || !strings.Contains(r.stderr, " at once") {
		t.Errorf("the bar does not show the refusals and the window:\n%q", r.stderr)
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var last concurrencyRecord
	lines := 0
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var ev struct {
			Event string `json:"event"`
			concurrencyRecord
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if ev.Event == "concurrency" {
			lines++
			last = ev.concurrencyRecord
		}
	}
	if lines < 2 || last.Refusals != 3 || last.Least != sum.LeastConcurrency {
		t.Fatalf("%d concurrency lines in the log, the last %+v; want at least 2, the last with 3 refusals, least %d", lines, last, sum.LeastConcurrency)
	}
}
