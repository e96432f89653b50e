package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cliResult is what one in-process run of gcsput produced.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs gcsput in-process with stdin as input.
func runCLI(t testing.TB, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{
		stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		isTerminal: func(io.Writer) bool { return false },
	}
	code := a.run(context.Background(), args)
	return cliResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// wantUsage checks a usage error: exit 2, nothing on stdout, every fragment on stderr.
func wantUsage(t *testing.T, r cliResult, fragments ...string) {
	t.Helper()
	if r.code != exitUsage {
		t.Errorf("exit code %d, want %d; stderr:\n%s", r.code, exitUsage, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout should be empty on a usage error, got %q", r.stdout)
	}
	for _, f := range fragments {
		if !strings.Contains(r.stderr, f) {
			t.Errorf("stderr lacks %q:\n%s", f, r.stderr)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(file, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope.txt")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no command", nil, []string{"no command given", "Run 'gcsput help'"}},
		{"unknown command", []string{"cpy"}, []string{`unknown command "cpy"`}},
		{"unknown flag", []string{"cp", "--frobnicate", file, "gs://bkt/"}, []string{"gcsput cp: flag provided but not defined: --frobnicate\n", "Run 'gcsput cp --help'"}},
		{"unknown flag with value", []string{"cp", "--storage-klass=NEARLINE", file, "gs://bkt/"}, []string{"flag provided but not defined: --storage-klass; did you mean --storage-class?\n"}},
		{"gsutil -m first", []string{"-m", "cp", file, "gs://bkt/"}, []string{"-m is gsutil's: gcsput always transfers in parallel; set how many files at once with -j N"}},
		{"gsutil -m after cp", []string{"cp", "-m", file, "gs://bkt/"}, []string{"gcsput cp: -m is gsutil's"}},
		{"gsutil -o", []string{"-o", "GSUtil:parallel_composite_upload_threshold=150M", "cp", file, "gs://bkt/"}, []string{"-o is gsutil's boto option: gcsput takes flags instead"}},
		{"unknown short flag", []string{"cp", "-Q", file, "gs://bkt/"}, []string{"flag provided but not defined: -Q\n"}},
		{"missing file", []string{"cp", missing, "gs://bkt/"}, []string{"gcsput cp: " + missing + ": no such file or directory"}},
		{"gs:/ typo in destination", []string{"cp", file, "gs:/bucket/x"}, []string{`gcsput cp: bad URL name "gs:/bucket/x": did you mean gs://bucket/x?`}},
		{"gs:/ typo in source", []string{"cp", "gs:/bucket/x", dir}, []string{`did you mean gs://bucket/x?`}},
		{"bad chunk size", []string{"cp", "--chunk-size", "100KiB", file, "gs://bkt/"}, []string{
			`invalid value "100KiB" for flag --chunk-size: 100.0 KiB is not a multiple of 256 KiB (GCS rejects such chunks); try 256.0 KiB`}},
		{"stdin chunk too large", []string{"cp", "--chunk-size", "1TiB", "-", "gs://bkt/o"}, []string{
			"--chunk-size 1.0 TiB is too large for standard input, whose chunk is held in memory: the limit is 1.0 GiB"}},
		{"chunk size not a size", []string{"cp", "--chunk-size=lots", file, "gs://bkt/"}, []string{`"lots" is not a size`}},
		{"chunk size between", []string{"cp", "--chunk-size=5000KiB", file, "gs://bkt/"}, []string{"4.9 MiB is not a multiple of 256 KiB (GCS rejects such chunks); try 4.8 MiB or 5.0 MiB"}},
		{"directory without -r", []string{"cp", dir, "gs://bkt/"}, []string{"is a directory: add -r"}},
		{"one operand", []string{"cp", file}, []string{"need a source and a destination"}},
		{"no gs side", []string{"cp", file, dir}, []string{"one side of cp must be GCS"}},
		{"gcs and local sources", []string{"cp", "gs://akt/x", file, "gs://bkt/y/"}, []string{"cannot mix local and gs:// sources in one cp"}},
		{"gcs folder without -r", []string{"cp", "gs://akt/p/", "gs://bkt/y/"}, []string{"gs://akt/p/ is a bucket or folder: add -r to copy"}},
		{"gcs copy with headers", []string{"cp", "-h", "Cache-Control: no-cache", "gs://akt/x", "gs://bkt/y"}, []string{"a copy keeps its source's metadata"}},
		{"stdin to folder", []string{"cp", "-", "gs://bkt/dir/"}, []string{"gs://bkt/dir/ is a folder: name the object"}},
		{"stdin with others", []string{"cp", "-", file, "gs://bkt/dir/"}, []string{`"-" (standard input) must be the only source`}},
		{"prefix without -r", []string{"cp", "gs://bkt/photos/", dir}, []string{"gs://bkt/photos/ is a bucket or folder: add -r"}},
		{"stdout with -r", []string{"cp", "-r", "gs://bkt/p", "-"}, []string{"standard output"}},
		{"bad header", []string{"cp", "-h", "X-Frob: 1", file, "gs://bkt/"}, []string{"unsupported header"}},
		{"header without colon", []string{"cp", "-h", "Cache-Control", file, "gs://bkt/"}, []string{"want 'Name: value'"}},
		{"bad metadata", []string{"cp", "--metadata", "novalue", file, "gs://bkt/"}, []string{"want KEY=VALUE"}},
		{"bad progress", []string{"cp", "--progress=sometimes", file, "gs://bkt/"}, []string{"--progress must be auto, always or never"}},
		{"negative parallel", []string{"cp", "-j", "-3", file, "gs://bkt/"}, []string{"must be at least 1"}},
		{"bad parallel", []string{"cp", "-j", "four", file, "gs://bkt/"}, []string{`invalid value "four" for flag -j: want a whole number`}},
		{"bad retry policy", []string{"cp", "--retry", "fibonacci", file, "gs://bkt/"}, []string{"--retry:", "fibonacci", "gcs"}},
		{"bad retry key", []string{"cp", "--retry", "gcs:maximum=3s", file, "gs://bkt/"}, []string{"--retry:", "maximum"}},
		{"bad deadline", []string{"cp", "--deadline", "soon", file, "gs://bkt/"}, []string{"want a duration"}},
		{"bad bucket", []string{"cp", file, "gs://My_Bucket/x"}, []string{`bad bucket name "My_Bucket"`, "use lowercase letters"}},
		{"gcs:// scheme", []string{"cp", file, "gcs://bkt/x"}, []string{"did you mean gs://bkt/x?"}},
		{"missing bucket", []string{"cp", file, "gs://"}, []string{`bad bucket name "": empty`}},
		{"-I with extra operand", []string{"cp", "-I", file, "gs://bkt/"}, []string{"with -I, give only the destination"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantUsage(t, runCLI(t, "", tt.args...), tt.want...)
		})
	}
}

func TestHelp(t *testing.T) {
	r := runCLI(t, "", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "Exit codes:") || !strings.Contains(r.stdout, "cp ") {
		t.Fatalf("main help: code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, c := range commands() {
		args := append(strings.Fields(c.name), "--help")
		r := runCLI(t, "", args...)
		if r.code != 0 {
			t.Errorf("%s --help: exit %d, stderr %q", c.name, r.code, r.stderr)
		}
		for _, want := range []string{"Usage: gcsput " + c.name, "Examples:", "gcsput " + c.name} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s --help lacks %q:\n%s", c.name, want, r.stdout)
			}
		}
		same := runCLI(t, "", append([]string{"help"}, strings.Fields(c.name)...)...)
		if same.stdout != r.stdout {
			t.Errorf("'gcsput help %s' differs from '%s --help'", c.name, c.name)
		}
	}
}

func TestVersion(t *testing.T) {
	r := runCLI(t, "", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "gcsput ") {
		t.Fatalf("version: %+v", r)
	}
}

func TestFlagSetParse(t *testing.T) {
	var rec, nc, v bool
	var j int
	var hs []string
	fs := newFlagSet("t")
	fs.Bool(&rec, "recursive", "r", "")
	fs.Alias("R", "recursive")
	fs.Bool(&nc, "no-clobber", "n", "")
	fs.Bool(&v, "verbose", "v", "")
	fs.Int(&j, "parallel", "j", "N", "")
	fs.List(&hs, "header", "h", "H", "")
	ops, err := fs.Parse([]string{"a", "-rn", "--parallel=8", "b", "-h", "X: 1", "-h", "Y: 2", "--", "-v", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ops, "|"); got != "a|b|-v|c" {
		t.Errorf("operands %q, want a|b|-v|c", got)
	}
	if !rec || !nc || v || j != 8 || strings.Join(hs, ",") != "X: 1,Y: 2" {
		t.Errorf("rec=%v nc=%v v=%v j=%d hs=%q", rec, nc, v, j, hs)
	}
	rec = false
	if _, err := fs.Parse([]string{"-R", "x"}); err != nil || !rec {
		t.Errorf("-R alias: rec=%v err=%v", rec, err)
	}
}

func TestInterruptedHint(t *testing.T) {
	for _, c := range []struct {
		e    interruptedError
		want []string
		not  string
	}{
		{interruptedError{interrupted: 1, saved: 1, total: 3}, []string{"1 unfinished transfer saved: 'gcsput resume'"}, "not started"},
		{interruptedError{interrupted: 7, saved: 1, total: 13, cmd: "cp"}, []string{"1 unfinished transfer saved", "6 transfers not started or not resumable", "--skip-unchanged"}, ""},
		{interruptedError{interrupted: 7, saved: 1, total: 13, cmd: "sync"}, []string{"6 transfers not started or not resumable: run the same command again"}, "--skip-unchanged"},
		{interruptedError{interrupted: 2, saved: 0, total: 2}, []string{"2 transfers not started"}, "gcsput resume"},
	} {
		h := c.e.hint()
		for _, w := range c.want {
			if !strings.Contains(h, w) {
				t.Errorf("%+v: hint %q lacks %q", c.e, h, w)
			}
		}
		if c.not != "" && strings.Contains(h, c.not) {
			t.Errorf("%+v: hint %q has %q", c.e, h, c.not)
		}
		if !errors.Is(&c.e, errInterrupted) {
			t.Errorf("%+v does not match errInterrupted", c.e)
		}
	}
}
