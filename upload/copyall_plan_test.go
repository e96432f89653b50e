package upload

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUploadNaming(t *testing.T) {
	dir := t.TempDir()
	photos := filepath.Join(dir, "photos")
	file := filepath.Join(dir, "a.txt")
	file2 := filepath.Join(dir, "b.txt")
	if err := os.Mkdir(photos, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{file, file2} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// gs://bkt/old/ holds objects (or a first, interrupted run made them): the names do
	// not change for that, so a rerun and every shard resolve the same ones.
	tests := []struct {
		srcs []string
		dst  string
		want string // "bucket/name" per source, joined with " "
	}{
		{[]string{file}, "gs://bkt/name", "bkt/name"},
		{[]string{file}, "gs://bkt/old", "bkt/old"},
		{[]string{file}, "gs://bkt/dir/", "bkt/dir/a.txt"},
		{[]string{file}, "gs://bkt", "bkt/a.txt"},
		{[]string{file}, "gs://bkt/", "bkt/a.txt"},
		{[]string{file, file2}, "gs://bkt/x", "bkt/x/a.txt bkt/x/b.txt"},
		{[]string{photos}, "gs://bkt", "bkt/photos/"},
		{[]string{photos}, "gs://bkt/dst/", "bkt/dst/photos/"},
		{[]string{photos}, "gs://bkt/new", "bkt/new/"},
		{[]string{photos}, "gs://bkt/old", "bkt/old/"},
		{[]string{photos}, "gs://bkt/old/", "bkt/old/photos/"},
		{[]string{photos, file}, "gs://bkt/new", "bkt/new/photos/ bkt/new/a.txt"},
		{[]string{photos + "/"}, "gs://bkt/", "bkt/photos/"},
		{[]string{"-"}, "gs://bkt/stream.bin", "bkt/stream.bin"},
	}
	for _, tt := range tests {
		u, err := ParseURL(tt.dst)
		if err != nil {
			t.Fatal(err)
		}
		items, err := planUpload(tt.srcs, u, true)
		if err != nil {
			t.Errorf("cp %v %s: %v", tt.srcs, tt.dst, err)
			continue
		}
		var got []string
		for _, it := range items {
			got = append(got, it.dst.Bucket+"/"+it.dst.Object)
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("cp %v %s: got %q, want %q", tt.srcs, tt.dst, g, tt.want)
		}
	}
}

func TestUploadStdinToFolder(t *testing.T) {
	_, err := planUpload([]string{"-"}, URL{"bkt", "old/"}, false)
	if err == nil || !strings.Contains(err.Error(), "gs://bkt/old/ is a folder: name the object") {
		t.Fatalf("got %v", err)
	}
}

func TestDownloadNaming(t *testing.T) {
	dir := t.TempDir()
	restore := filepath.Join(dir, "restore")
	if err := os.Mkdir(restore, 0o755); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh")
	folders := map[string]bool{"bkt/photos/": true}
	probe := func(_ context.Context, bucket, prefix string) (bool, error) {
		return folders[bucket+"/"+prefix], nil
	}
	tests := []struct {
		srcs      []string
		recursive bool
		dst       string
		want      string // "object>local[/]" per item, "/" marking a prefix
	}{
		{[]string{"gs://bkt/o.txt"}, false, restore, "o.txt>" + filepath.Join(restore, "o.txt")},
		{[]string{"gs://bkt/o.txt"}, false, fresh, "o.txt>" + fresh},
		{[]string{"gs://bkt/o.txt"}, false, "-", "o.txt>-"},
		{[]string{"gs://bkt/o.txt"}, true, restore, "o.txt>" + filepath.Join(restore, "o.txt")},
		{[]string{"gs://bkt/photos"}, true, restore, "photos/>" + restore + "/"},
		{[]string{"gs://bkt/photos"}, true, restore + "/", "photos/>" + filepath.Join(restore, "photos") + "/"},
		{[]string{"gs://bkt/photos"}, true, ".", "photos/>photos/"},
		{[]string{"gs://bkt/photos"}, true, fresh, "photos/>" + fresh + "/"},
		{[]string{"gs://bkt/photos/"}, true, fresh, "photos/>" + fresh + "/"},
		{[]string{"gs://bkt"}, true, restore, ">" + restore + "/"},
		{[]string{"gs://bkt/x", "gs://bkt/y"}, false, fresh, "x>" + filepath.Join(fresh, "x") + " y>" + filepath.Join(fresh, "y")},
	}
	for _, tt := range tests {
		items, err := planDownload(context.Background(), tt.srcs, tt.dst, tt.recursive, probe)
		if err != nil {
			t.Errorf("cp %v %s: %v", tt.srcs, tt.dst, err)
			continue
		}
		var got []string
		for _, it := range items {
			s := it.src.Object + ">" + it.dst
			if it.prefix {
				s += "/"
			}
			got = append(got, s)
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("cp %v %s: got %q, want %q", tt.srcs, tt.dst, g, tt.want)
		}
	}
}

// Copies between gs:// locations are named like uploads: a folder keeps its name in a
// container (a bucket, a trailing slash, several sources) and takes the destination's
// otherwise; an object goes inside a container under its base name.
func TestCopyNaming(t *testing.T) {
	probe := func(_ context.Context, bucket, prefix string) (bool, error) {
		return bucket+"/"+prefix == "aaa/photos/", nil
	}
	tests := []struct {
		srcs      []string
		recursive bool
		dst       string
		want      string // "source>destination" per item
	}{
		{[]string{"gs://aaa/x/o.txt"}, false, "gs://bbb/y", "x/o.txt>y"},
		{[]string{"gs://aaa/x/o.txt"}, false, "gs://bbb/dir/", "x/o.txt>dir/o.txt"},
		{[]string{"gs://aaa/x/o.txt"}, false, "gs://bbb", "x/o.txt>o.txt"},
		{[]string{"gs://aaa/o1", "gs://aaa/o2"}, false, "gs://bbb/d", "o1>d/o1 o2>d/o2"},
		{[]string{"gs://aaa/photos"}, true, "gs://bbb/q/", "photos/>q/photos/"},
		{[]string{"gs://aaa/photos/"}, true, "gs://bbb/q", "photos/>q/"},
		{[]string{"gs://aaa/photos"}, true, "gs://bbb", "photos/>photos/"},
		{[]string{"gs://aaa/o.txt"}, true, "gs://bbb/q/", "o.txt>q/o.txt"},
		{[]string{"gs://aaa"}, true, "gs://bbb/q/", ">q/"},
	}
	for _, tt := range tests {
		dst, _ := ParseURL(tt.dst)
		items, err := planCopy(context.Background(), tt.srcs, dst, tt.recursive, probe)
		if err != nil {
			t.Errorf("cp %v %s: %v", tt.srcs, tt.dst, err)
			continue
		}
		var got []string
		for _, it := range items {
			got = append(got, it.src.Object+">"+it.dst.Object)
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("cp %v %s: got %q, want %q", tt.srcs, tt.dst, g, tt.want)
		}
	}
}
