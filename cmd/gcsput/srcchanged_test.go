package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// An object overwritten between a batch's listing and its transfer (here, while its first
// request meets a 503) is reported as cp reports a source changed during a copy, naming
// both generations, not as a bare 404 of the generation listed (or, copying, that 404's
// message garbled by REDACTED between every letter): sync and cp -r, downloading and
// copying.
func TestOverwrittenSourceSaysChanged(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"sync", "gs://bkt/p", "DIR"},
		{"cp", "-r", "gs://bkt/p", "DIR"},
		{"cp", "-r", "gs://bkt/p", "gs://bkt/q/"},
	} {
		t.Run(strings.Join(args[:len(args)-2], " ")+" to "+args[len(args)-1][:3], func(t *testing.T) {
			t.Parallel()
			var srv *fakegcs.Server
			var once sync.Once
			srv = fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Faults: []fakegcs.Fault{
				{Object: "p/a", Op: "storage.objects.get", Phase: fakegcs.PhaseMedia, Kind: fakegcs.KindStatus, Status: 503, Optional: true},
				{Object: "p/a", Op: "storage.objects.rewrite", Kind: fakegcs.KindStatus, Status: 503, Optional: true},
			}, Logf: func(format string, a ...any) {
				if strings.Contains(fmt.Sprintf(format, a...), "injecting") {
					once.Do(func() { srv.PutObject("bkt", "p/a", []byte("new content")) }) // before the retry
				}
			}})
			srv.PutObject("bkt", "p/a", []byte("old content"))
			dir := t.TempDir()
			run := append([]string(nil), args...)
			if run[len(run)-1] == "DIR" {
				run[len(run)-1] = filepath.Join(dir, "out")
			}
			r := runIn(context.Background(), false, append(run, "--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"), fastRetry)...)
			now, _ := srv.Attrs("bkt", "p/a")
			what := map[string]string{"sync": "download", "cp": "download"}[args[0]]
			if strings.HasPrefix(args[len(args)-1], "gs://") {
				what = "copy"
			}
			want := regexp.MustCompile(what + `: the source gs://bkt/p/a changed during the ` + what + ` \(generation \d+, now ` + strconv.FormatInt(now.Generation, 10) + `\): nothing was written to `)
			if r.code != exitFailed || !want.MatchString(r.stderr) || strings.Contains(r.stderr, "REDACTED") {
				t.Errorf("gcsput %q: exit %d, stderr:\n%s\nwant exit 1 and %q", run, r.code, r.stderr, want)
			}
		})
	}
}
