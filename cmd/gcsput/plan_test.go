package main

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
	// existing is the set of folders the fake probe says hold objects.
	existing := map[string]bool{"b/old/": true}
	probe := func(_ context.Context, bucket, prefix string) (bool, error) {
		return existing[bucket+"/"+prefix], nil
	}
	tests := []struct {
		srcs []string
		dst  string
		want string // "bucket/name" per source, joined with " "
	}{
		{[]string{file}, "gs://b/name", "b/name"},
		{[]string{file}, "gs://b/old", "b/old/a.txt"},
		{[]string{file}, "gs://b/dir/", "b/dir/a.txt"},
		{[]string{file}, "gs://b", "b/a.txt"},
		{[]string{file}, "gs://b/", "b/a.txt"},
		{[]string{file, file2}, "gs://b/x", "b/x/a.txt b/x/b.txt"},
		{[]string{photos}, "gs://b", "b/photos/"},
		{[]string{photos}, "gs://b/dst/", "b/dst/photos/"},
		{[]string{photos}, "gs://b/new", "b/new/"},
		{[]string{photos}, "gs://b/old", "b/old/photos/"},
		{[]string{photos, file}, "gs://b/new", "b/new/photos/ b/new/a.txt"},
		{[]string{photos + "/"}, "gs://b/", "b/photos/"},
		{[]string{"-"}, "gs://b/stream.bin", "b/stream.bin"},
	}
	for _, tt := range tests {
		u, err := parseRemote(tt.dst)
		if err != nil {
			t.Fatal(err)
		}
		items, err := planUpload(context.Background(), tt.srcs, u, true, probe)
		if err != nil {
			t.Errorf("cp %v %s: %v", tt.srcs, tt.dst, err)
			continue
		}
		var got []string
		for _, it := range items {
			got = append(got, it.dst.bucket+"/"+it.dst.name)
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("cp %v %s: got %q, want %q", tt.srcs, tt.dst, g, tt.want)
		}
	}
}

func TestUploadStdinToExistingFolder(t *testing.T) {
	probe := func(_ context.Context, bucket, prefix string) (bool, error) { return prefix == "old/", nil }
	_, err := planUpload(context.Background(), []string{"-"}, remoteURL{"b", "old"}, false, probe)
	if err == nil || !strings.Contains(err.Error(), "gs://b/old is a folder: name the object") {
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
	folders := map[string]bool{"b/photos/": true}
	probe := func(_ context.Context, bucket, prefix string) (bool, error) {
		return folders[bucket+"/"+prefix], nil
	}
	tests := []struct {
		srcs      []string
		recursive bool
		dst       string
		want      string // "object>local[/]" per item, "/" marking a prefix
	}{
		{[]string{"gs://b/o.txt"}, false, restore, "o.txt>" + filepath.Join(restore, "o.txt")},
		{[]string{"gs://b/o.txt"}, false, fresh, "o.txt>" + fresh},
		{[]string{"gs://b/o.txt"}, false, "-", "o.txt>-"},
		{[]string{"gs://b/o.txt"}, true, restore, "o.txt>" + filepath.Join(restore, "o.txt")},
		{[]string{"gs://b/photos"}, true, restore, "photos/>" + filepath.Join(restore, "photos") + "/"},
		{[]string{"gs://b/photos"}, true, fresh, "photos/>" + fresh + "/"},
		{[]string{"gs://b/photos/"}, true, fresh, "photos/>" + fresh + "/"},
		{[]string{"gs://b"}, true, restore, ">" + restore + "/"},
		{[]string{"gs://b/x", "gs://b/y"}, false, fresh, "x>" + filepath.Join(fresh, "x") + " y>" + filepath.Join(fresh, "y")},
	}
	for _, tt := range tests {
		items, err := planDownload(context.Background(), tt.srcs, tt.dst, tt.recursive, parseRemote, probe)
		if err != nil {
			t.Errorf("cp %v %s: %v", tt.srcs, tt.dst, err)
			continue
		}
		var got []string
		for _, it := range items {
			s := it.src.object + ">" + it.dst
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

func TestCheckTypo(t *testing.T) {
	for in, want := range map[string]string{
		"gs:/b/o":  `did you mean "gs://b/o"?`,
		"gs:b/o":   `did you mean "gs://b/o"?`,
		"GS://b/o": `did you mean "gs://b/o"?`,
		"gs//b/o":  `did you mean "gs://b/o"?`,
		"gs:///b":  `did you mean "gs://b"?`,
	} {
		err := checkTypo(in)
		if in == "gs:///b" {
			// gs:/// is a gs:// URL with an empty bucket: the parser's "missing bucket" case.
			if err != nil {
				t.Errorf("checkTypo(%q) = %v, want nil", in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkTypo(%q) = %v, want %q", in, err, want)
		}
	}
	for _, ok := range []string{"gs://b/o", "./gs:/x", "file.txt", "-", "gsdata/x"} {
		if err := checkTypo(ok); err != nil {
			t.Errorf("checkTypo(%q) = %v, want nil", ok, err)
		}
	}
}
