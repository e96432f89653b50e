package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// With a tiny open-file limit and -j 1000, every file still arrives: the
// parallelism is lowered to what the limit holds (said once on stderr), and
// running out of descriptors is waited out, never a failed file.
func TestE2EOpenFileLimitIsBackPressure(t *testing.T) {
	e := newE2E(t)
	want := map[string][]byte{}
	for i := range 200 {
		name := fmt.Sprintf("f%03d.bin", i)
		want[name] = e.write("src/"+name, 1000+i)
	}
	cmd := exec.Command("bash", "-c", `ulimit -n 40 && exec "$@"`, "bash",
		gcsputBin, "cp", "-r", "-j", "1000", "--json", fastRetry, "src", "gs://bkt/d")
	cmd.Env, cmd.Dir = e.env(), e.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, errb.String())
	}
	files, sum := jsonLines(t, out.String())
	if sum.Failed != 0 || len(files) != 200 {
		t.Fatalf("%d records, summary %+v\nstderr:\n%s", len(files), sum, errb.String())
	}
	for name, data := range want {
		if got := e.object("d/" + name); !bytes.Equal(got, data) {
			t.Fatalf("d/%s: %d bytes differ", name, len(got))
		}
	}
	if w := "gcsput: warning: transferring 2 files at once instead of 1000: the open-file limit (ulimit -n) is 40"; !strings.Contains(errb.String(), w) {
		t.Errorf("stderr lacks %q:\n%s", w, errb.String())
	}
}
