package main

import (
	"strings"
	"testing"
)

func TestCheckTypo(t *testing.T) {
	for _, in := range []string{"gs:/b/o", "gs:b/o", "GS://bkt/o", "gcs://bkt/o"} {
		if err := checkTypo(in); err == nil || !strings.Contains(err.Error(), "did you mean gs://") {
			t.Errorf("checkTypo(%q) = %v, want a suggestion", in, err)
		}
	}
	for _, ok := range []string{"gs://b/o", "./gs:/x", "file.txt", "-", "gsdata/x"} {
		if err := checkTypo(ok); err != nil {
			t.Errorf("checkTypo(%q) = %v, want nil", ok, err)
		}
	}
}
