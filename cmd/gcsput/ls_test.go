package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// ls shows folders with their bucket: gs://bkt/photos/, never gs:///photos/.
func TestLsPrefixesNameTheBucket(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	srv.PutObject("bkt", "photos/a.jpg", []byte("a"))
	srv.PutObject("bkt", "top.txt", []byte("t"))
	r := runIn(context.Background(), false, "ls", "--endpoint", srv.URL(), "gs://bkt")
	if r.code != 0 || r.stdout != "gs://bkt/top.txt\ngs://bkt/photos/\n" {
		t.Errorf("exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	r = runIn(context.Background(), false, "ls", "--json", "--endpoint", srv.URL(), "gs://bkt")
	if !strings.Contains(r.stdout, `"url":"gs://bkt/photos/","bucket":"bkt","prefix":"photos/"`) {
		t.Errorf("json: %s", r.stdout)
	}
}
